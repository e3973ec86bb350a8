import {
  getVersion,
  listResources,
  listVersions,
  setVersionEnabled,
  type StoredVersion,
  type VersionedKind,
} from '@maitento/store';
import type { FastifyInstance } from 'fastify';
import { nameParams, responses, versionParams } from '../schemas/shared.js';
import type { ServerContext } from './context.js';

/** How one versioned kind is exposed: its path, its OpenAPI tag, and the detail answer of one version. */
export interface VersionedRouteSpec {
  kind: VersionedKind;
  /** `/connectors` or `/extops`. */
  path: string;
  tag: string;
  /** The noun of its operation ids (`Connector` gives `listConnectors`, `getConnectorVersion`, ...). */
  noun: string;
  /** The JSON Schema of the detail answer. */
  detailSchema: Record<string, unknown>;
  /** Turns a stored version into the detail answer. */
  detail: (stored: StoredVersion) => Record<string, unknown>;
  /** A list of its own (extops add whether each tool is callable), with the schema of its items. */
  list?: {
    item: Record<string, unknown>;
    read: (namespace: string) => Promise<unknown[]>;
  };
}

/** Adds list, latest, versions, one version, disable and enable routes for a versioned kind. */
export function versionedRoutes(app: FastifyInstance, ctx: ServerContext, spec: VersionedRouteSpec): void {
  const { kind, path, tag, noun } = spec;
  const summaryItem = spec.list?.item ?? { $ref: 'ResourceSummary#' };
  app.get(
    path,
    {
      schema: {
        operationId: `list${noun}s`,
        tags: [tag],
        summary: `List ${tag} with their latest versions`,
        response: responses({ 200: { type: 'array', items: summaryItem } }),
      },
    },
    async (request) =>
      spec.list ? spec.list.read(request.identity.namespace) : listResources(ctx.db, request.identity.namespace, kind),
  );
  app.get<{ Params: { name: string } }>(
    `${path}/:name`,
    {
      schema: {
        operationId: `get${noun}`,
        tags: [tag],
        summary: 'The latest version',
        params: nameParams,
        response: responses({ 200: spec.detailSchema }),
      },
    },
    async (request) => spec.detail(await getVersion(ctx.db, request.identity.namespace, kind, request.params.name)),
  );
  app.get<{ Params: { name: string } }>(
    `${path}/:name/versions`,
    {
      schema: {
        operationId: `list${noun}Versions`,
        tags: [tag],
        summary: 'Every version, newest first',
        params: nameParams,
        response: responses({ 200: { type: 'array', items: { $ref: 'VersionSummary#' } } }),
      },
    },
    async (request) => listVersions(ctx.db, request.identity.namespace, kind, request.params.name),
  );
  app.get<{ Params: { name: string; version: number } }>(
    `${path}/:name/versions/:version`,
    {
      schema: {
        operationId: `get${noun}Version`,
        tags: [tag],
        summary: 'One version',
        params: versionParams,
        response: responses({ 200: spec.detailSchema }),
      },
    },
    async (request) =>
      spec.detail(
        await getVersion(ctx.db, request.identity.namespace, kind, request.params.name, request.params.version),
      ),
  );
  for (const action of ['disable', 'enable'] as const) {
    app.post<{ Params: { name: string; version: number } }>(
      `${path}/:name/versions/:version/${action}`,
      {
        config: { role: 'admin' },
        schema: {
          operationId: `${action}${noun}Version`,
          tags: [tag],
          summary: `${action === 'disable' ? 'Disable' : 'Enable'} one version; calls pinned to it ${action === 'disable' ? 'fail' : 'work again'} from the next call`,
          params: versionParams,
          response: responses({ 200: { $ref: 'VersionState#' } }),
        },
      },
      async (request) => {
        const namespace = request.identity.namespace;
        const { name, version } = request.params;
        const state = await setVersionEnabled(ctx.db, namespace, kind, name, version, action === 'enable');
        ctx.cache.changed({ kind: 'resources', namespace });
        return state;
      },
    );
  }
}
