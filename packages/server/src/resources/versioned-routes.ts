import {
  getVersion,
  listResources,
  listVersions,
  type Queryable,
  type ResourceOf,
  type StoredVersion,
  setVersionEnabled,
  type VersionedKind,
  type VersionSummary,
} from '@maitento/store';
import type { NameParamsSchema, OperationId, RequestTypes, VersionParamsSchema } from '@maitento/sdk';
import type { FastifyInstance } from 'fastify';
import { operation, responses } from '../schemas/shared.js';
import type { ServerContext } from '../server/context.js';
import {
  getRunnable,
  listRunnableVersions,
  type RunnableKind,
  type RunnableOf,
  type StoredRunnable,
} from './resource-reads.js';

/** How the routes of one kind read it: the list, one version (the latest without `version`), every version. */
export interface VersionedReads<S> {
  list: (namespace: string) => Promise<unknown[]>;
  get: (namespace: string, name: string, version?: number) => Promise<S>;
  versions: (namespace: string, name: string) => Promise<VersionSummary[]>;
}

/** How one versioned kind is exposed: its path, its OpenAPI tag, how it is read and its detail answer. */
export interface VersionedRouteSpec<S> {
  /** `/connectors`, `/extops`, `/agents` or `/interactions`. */
  path: string;
  tag: string;
  /** The noun of its operation ids (`Connector` gives `listConnectors`, `getConnectorVersion`, ...). */
  noun: string;
  reads: VersionedReads<S>;
  /** The schema of a list item; `ResourceSummary` when absent. */
  listItem?: Record<string, unknown>;
  /** The schema of the detail answer (an SDK schema by `$ref`). */
  detailSchema: Record<string, unknown>;
  /** Turns a stored version into the detail answer (it may read the versions it pins). */
  detail: (stored: S, namespace: string) => unknown;
  /** Connectors and tools: the kind whose versions the disable and enable routes switch. */
  toggles?: VersionedKind;
}

/** The store's reads of connectors or tools, which answer the store's own not-found errors. */
export function storeReads<K extends VersionedKind>(
  db: Queryable,
  kind: K,
): VersionedReads<StoredVersion<ResourceOf<K>>> {
  return {
    list: (namespace) => listResources(db, namespace, kind),
    get: (namespace, name, version) => getVersion(db, namespace, kind, name, version),
    versions: (namespace, name) => listVersions(db, namespace, kind, name),
  };
}

/** The reads of agents or interactions, which answer their own packages' not-found errors. */
export function runnableReads<K extends RunnableKind>(
  db: Queryable,
  kind: K,
): VersionedReads<StoredRunnable<RunnableOf<K>>> {
  return {
    list: (namespace) => listResources(db, namespace, kind),
    get: (namespace, name, version) => getRunnable(db, namespace, kind, name, version),
    versions: (namespace, name) => listRunnableVersions(db, namespace, kind, name),
  };
}

/** Adds list, latest, versions and one version routes, and for connectors and tools disable and enable. */
export function versionedRoutes<S>(app: FastifyInstance, ctx: ServerContext, spec: VersionedRouteSpec<S>): void {
  const { path, tag, noun, reads } = spec;
  app.get(
    path,
    {
      schema: {
        ...operation(`list${noun}s` as OperationId),
        tags: [tag],
        summary: `List ${tag} with their latest versions`,
        response: responses({ 200: { type: 'array', items: spec.listItem ?? { $ref: 'ResourceSummary#' } } }),
      },
    },
    async (request) => reads.list(request.identity.namespace),
  );
  app.get<RequestTypes<{ params: typeof NameParamsSchema }>>(
    `${path}/:name`,
    {
      schema: {
        ...operation(`get${noun}` as OperationId),
        tags: [tag],
        summary: 'The latest version',
        response: responses({ 200: spec.detailSchema }),
      },
    },
    async (request) => {
      const namespace = request.identity.namespace;
      return spec.detail(await reads.get(namespace, request.params.name), namespace);
    },
  );
  app.get<RequestTypes<{ params: typeof NameParamsSchema }>>(
    `${path}/:name/versions`,
    {
      schema: {
        ...operation(`list${noun}Versions` as OperationId),
        tags: [tag],
        summary: 'Every version, newest first',
        response: responses({ 200: { type: 'array', items: { $ref: 'VersionSummary#' } } }),
      },
    },
    async (request) => reads.versions(request.identity.namespace, request.params.name),
  );
  app.get<RequestTypes<{ params: typeof VersionParamsSchema }>>(
    `${path}/:name/versions/:version`,
    {
      schema: {
        ...operation(`get${noun}Version` as OperationId),
        tags: [tag],
        summary: 'One version',
        response: responses({ 200: spec.detailSchema }),
      },
    },
    async (request) => {
      const namespace = request.identity.namespace;
      const { name, version } = request.params;
      return spec.detail(await reads.get(namespace, name, version), namespace);
    },
  );
  if (spec.toggles) toggleRoutes(app, ctx, spec, spec.toggles);
}

function toggleRoutes<S>(app: FastifyInstance, ctx: ServerContext, spec: VersionedRouteSpec<S>, kind: VersionedKind) {
  const { path, tag, noun } = spec;
  for (const action of ['disable', 'enable'] as const) {
    app.post<RequestTypes<{ params: typeof VersionParamsSchema }>>(
      `${path}/:name/versions/:version/${action}`,
      {
        config: { role: 'admin' },
        schema: {
          ...operation(`${action}${noun}Version` as OperationId),
          tags: [tag],
          summary: `${action === 'disable' ? 'Disable' : 'Enable'} one version; calls pinned to it ${action === 'disable' ? 'fail' : 'work again'} from the next call`,
          response: responses({ 200: { $ref: 'VersionState#' } }),
        },
      },
      async (request) => {
        const namespace = request.identity.namespace;
        const { name, version } = request.params;
        return changeVersionEnabled(ctx, namespace, kind, name, version, action === 'enable');
      },
    );
  }
}

/**
 * Enables or disables one version, for the REST route and the console alike: the update steps the cache epoch, and
 * this answers once every server's cache has applied it (or reads through), so the next call anywhere sees it.
 */
export async function changeVersionEnabled(
  ctx: ServerContext,
  namespace: string,
  kind: VersionedKind,
  name: string,
  version: number,
  enabled: boolean,
): Promise<Awaited<ReturnType<typeof setVersionEnabled>>> {
  const state = await setVersionEnabled(ctx.db, namespace, kind, name, version, enabled);
  await ctx.lease.settle();
  return state;
}
