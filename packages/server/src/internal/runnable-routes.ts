import { listResources } from '@maitento/store';
import type { FastifyInstance } from 'fastify';
import { nameParams, responses, versionParams } from '../schemas/shared.js';
import type { ServerContext } from './context.js';
import {
  getRunnable,
  listRunnableVersions,
  type RunnableKind,
  type RunnableOf,
  type StoredRunnable,
} from './resource-reads.js';

/** How agents or interactions are exposed: path, tag, and the detail answer of one version. */
export interface RunnableRouteSpec<K extends RunnableKind> {
  kind: K;
  /** `/agents` or `/interactions`. */
  path: string;
  tag: string;
  /** The noun of its operation ids (`Connector` gives `listConnectors`, `getConnectorVersion`, ...). */
  noun: string;
  detailSchema: Record<string, unknown>;
  /** Turns a stored version into the detail answer (it may read the versions it pins). */
  detail: (stored: StoredRunnable<RunnableOf<K>>, namespace: string) => Promise<Record<string, unknown>>;
}

const summaryItem = { $ref: 'ResourceSummary#' };

/** Adds the read routes of agents or interactions: list, latest, versions, one version. */
export function runnableRoutes<K extends RunnableKind>(
  app: FastifyInstance,
  ctx: ServerContext,
  spec: RunnableRouteSpec<K>,
): void {
  const { kind, path, tag, noun } = spec;
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
    async (request) => listResources(ctx.db, request.identity.namespace, kind),
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
    async (request) => {
      const namespace = request.identity.namespace;
      return spec.detail(await getRunnable(ctx.db, namespace, kind, request.params.name), namespace);
    },
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
    async (request) => listRunnableVersions(ctx.db, request.identity.namespace, kind, request.params.name),
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
    async (request) => {
      const namespace = request.identity.namespace;
      const { name, version } = request.params;
      return spec.detail(await getRunnable(ctx.db, namespace, kind, name, version), namespace);
    },
  );
}
