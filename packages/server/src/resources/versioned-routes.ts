import { NameParamsSchema, VersionParamsSchema } from '@maitento/sdk';
import {
  type AuditContext,
  getVersion,
  type NotFoundError,
  listResources,
  listVersions,
  type Queryable,
  type ResourceOf,
  type StoredVersion,
  setVersionEnabled,
  type VersionedKind,
  type VersionSummary,
} from '@maitento/store';
import type { ResourceKind } from '@maitento/lang';
import { auditContext } from '../http/actor.js';
import { deleteRoute } from './delete-route.js';
import { operation } from '../openapi/operation.js';
import type { Api } from '../schemas/shared.js';
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
  /** What the documentation calls one and many of it (`tool`, `tools`). */
  one: string;
  many: string;
  /** The code of a name or version that is not there. */
  notFound: string;
  /** The list operation's own description, success description and example, where the general ones do not fit. */
  list?: { description?: string; ok?: string; example?: unknown };
  reads: VersionedReads<S>;
  /** The schema of a list item; `ResourceSummary` when absent. */
  listItem?: Record<string, unknown>;
  /** The schema of the detail answer (an SDK schema by `$ref`). */
  detailSchema: Record<string, unknown>;
  /** Turns a stored version into the detail answer (it may read the versions it pins). */
  detail: (stored: S, namespace: string) => unknown;
  /** Connectors and tools: the kind whose versions the disable and enable routes switch. */
  toggles?: VersionedKind;
  /** The kind, and the not-found error of its `DELETE` route. */
  deletes: { kind: ResourceKind; notFoundError: NotFoundError };
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
export function versionedRoutes<S>(app: Api, ctx: ServerContext, spec: VersionedRouteSpec<S>): void {
  const { path, tag, noun, one, many, notFound, reads } = spec;
  app.get(
    path,
    {
      schema: operation({
        operationId: `list${noun}s`,
        tags: [tag],
        summary: `List ${tag} with their latest versions`,
        description:
          spec.list?.description ??
          `Lists the ${many} of the key's namespace by name, each with its latest version and whether that version is enabled.`,
        response: { 200: { type: 'array', items: spec.listItem ?? { $ref: 'ResourceSummary#' } } },
        ok: spec.list?.ok ?? `The ${many}, by name (an empty list when none is deployed)`,
        errors: [],
        ...(spec.list?.example === undefined ? {} : { examples: { ok: spec.list.example } }),
      }),
    },
    async (request) => reads.list(request.identity.namespace),
  );
  app.get(
    `${path}/:name`,
    {
      schema: operation({
        operationId: `get${noun}`,
        tags: [tag],
        summary: 'The latest version',
        description: `Reads the latest version of the ${one} named in the path, as deployed: its definition and the hash of its source.`,
        params: NameParamsSchema,
        response: { 200: spec.detailSchema },
        ok: `The latest version of the ${one}`,
        errors: [notFound],
      }),
    },
    async (request) => {
      const namespace = request.identity.namespace;
      return spec.detail(await reads.get(namespace, request.params.name), namespace);
    },
  );
  app.get(
    `${path}/:name/versions`,
    {
      schema: operation({
        operationId: `list${noun}Versions`,
        tags: [tag],
        summary: 'Every version, newest first',
        description: `Lists every deployed version of the ${one}, newest first, with whether each is enabled.`,
        params: NameParamsSchema,
        response: { 200: { type: 'array', items: { $ref: 'VersionSummary#' } } },
        ok: `The versions of the ${one}, newest first`,
        errors: [notFound],
      }),
    },
    async (request) => reads.versions(request.identity.namespace, request.params.name),
  );
  app.get(
    `${path}/:name/versions/:version`,
    {
      schema: operation({
        operationId: `get${noun}Version`,
        tags: [tag],
        summary: 'One version',
        description: `Reads one version of the ${one}, enabled or not: what runs pinned to that version use.`,
        params: VersionParamsSchema,
        response: { 200: spec.detailSchema },
        ok: `That version of the ${one}`,
        errors: [notFound],
      }),
    },
    async (request) => {
      const namespace = request.identity.namespace;
      const { name, version } = request.params;
      return spec.detail(await reads.get(namespace, name, version), namespace);
    },
  );
  if (spec.toggles) toggleRoutes(app, ctx, spec, spec.toggles);
  const { kind, notFoundError } = spec.deletes;
  deleteRoute(app, ctx, { kind, notFoundError: () => notFoundError, path, tag, noun, one, notFound });
}

function toggleRoutes<S>(app: Api, ctx: ServerContext, spec: VersionedRouteSpec<S>, kind: VersionedKind) {
  const { path, tag, noun, one, many, notFound } = spec;
  const disabledCode = `api:${many === 'tools' ? 'extops' : many === 'auth providers' ? 'auth-providers' : 'connectors'}:version-disabled`;
  const pinned = many === 'auth providers' ? 'new connect links to it' : 'calls pinned to it';
  const description = {
    disable: `Disables one version of the ${one} (admin key): ${pinned} fail with \`${disabledCode}\` from the next call on, until it is enabled again. Disabling a disabled version changes nothing.`,
    enable: `Enables one version of the ${one} again (admin key): calls pinned to it work from the next call on. Enabling an enabled version changes nothing.`,
  };
  for (const action of ['disable', 'enable'] as const) {
    app.post(
      `${path}/:name/versions/:version/${action}`,
      {
        config: { role: 'admin' },
        schema: operation({
          operationId: `${action}${noun}Version`,
          tags: [tag],
          summary: `${action === 'disable' ? 'Disable' : 'Enable'} one version; calls pinned to it ${action === 'disable' ? 'fail' : 'work again'} from the next call`,
          description: description[action],
          params: VersionParamsSchema,
          response: { 200: { $ref: 'VersionState#' } },
          ok: 'The version and its new state',
          errors: [notFound],
        }),
      },
      async (request) => {
        const namespace = request.identity.namespace;
        const { name, version } = request.params;
        return changeVersionEnabled(ctx, namespace, kind, name, version, action === 'enable', auditContext(request));
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
  audit: AuditContext,
): Promise<Awaited<ReturnType<typeof setVersionEnabled>>> {
  const state = await ctx.db.transaction((tx) => setVersionEnabled(tx, namespace, kind, name, version, enabled, audit));
  await ctx.lease.settle();
  return state;
}
