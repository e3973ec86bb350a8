import {
  type Agent,
  type AuthProvider,
  type Connector,
  didYouMean,
  type Interaction,
  type Schedule,
  type ResourceKind,
  type Tool,
  type Trigger,
  type ToolDefinition,
} from '@maitento/lang';
import type * as wire from '@maitento/sdk/wire';
import { type AuditContext, recordAudit } from '../audit/audit.js';
import type { Queryable } from '../db/db.js';
import { storeErrors } from '../errors.js';
import { iso } from '../internal/rows.js';
import { WAKE_CHANNEL } from '../wake/notify.js';
import type { Pin } from './hash.js';

/**
 * The hash of a deletion marker: the version a deletion (`DELETE /v1/...` or `mt deploy --prune`) appends after a
 * resource's last one (decision 0295). A content hash is 64 hex digits, so no deployed version has it. While it is a
 * resource's latest row the resource is deleted: not listed, not found, not startable; the versions before it stay
 * (runs pinned to them read them), and the next deploy that brings the resource back numbers on after the marker.
 */
export const DELETED_HASH = 'deleted';

/** The kinds whose single versions can be read, disabled and enabled. */
export type VersionedKind = 'auth-provider' | 'connector' | 'tool';

/** One stored version of a resource. */
export interface StoredVersion<R = unknown> {
  name: string;
  version: number;
  enabled: boolean;
  createdAt: string;
  hash: string;
  resource: R;
  pins: Pin[];
  definition: ToolDefinition | null;
}

/** A resource with its latest version. */
export type ResourceSummary = wire.ResourceSummary;

/** One version as listed. */
export type VersionSummary = wire.VersionInfo;

/** The resource type stored for each kind. */
export type ResourceOf<K extends ResourceKind> = K extends 'auth-provider'
  ? AuthProvider
  : K extends 'connector'
    ? Connector
    : K extends 'tool'
      ? Tool
      : K extends 'agent'
        ? Agent
        : K extends 'schedule'
          ? Schedule
          : K extends 'trigger'
            ? Trigger
            : Interaction;

/**
 * Makes the error for a resource, or one version of it, that is not there (each kind's package owns its code);
 * `suggestion` is {@link nameSuggestion}'s `; did you mean "weather"?`, or ''.
 */
export type NotFoundError = (name: string, version: number | undefined, suggestion: string) => Error;

/**
 * `; did you mean "NAME"?` when a resource of `kind` in `namespace` has a name close to `name` (and `name` itself
 * is not one: a missing version of an existing name gets ''), else ''. The `{suggestion}` of the not-found codes.
 */
export async function nameSuggestion(
  db: Queryable,
  namespace: string,
  kind: ResourceKind,
  name: string,
): Promise<string> {
  const { rows } = await db.query<{ name: string }>(
    'SELECT name FROM (SELECT DISTINCT ON (name) name, hash FROM mt_resource_versions ' +
      'WHERE namespace = $1 AND kind = $2 ORDER BY name, version DESC) latest WHERE hash <> $3 ORDER BY name',
    [namespace, kind, DELETED_HASH],
  );
  const names = rows.map((row) => row.name);
  if (names.includes(name)) return '';
  const guess = didYouMean(name, names);
  return guess === undefined ? '' : `; did you mean "${guess}"?`;
}

/** The not-found error of a connector, tool or auth provider (or one version of it): the store's own codes. */
export function notFound(kind: VersionedKind): NotFoundError {
  return (name, version, suggestion) => {
    const params = { name, version: version === undefined ? '' : ` version ${version}`, suggestion };
    if (kind === 'auth-provider') return storeErrors.create('api:auth-providers:not-found', params);
    return kind === 'connector'
      ? storeErrors.create('api:connectors:not-found', params)
      : storeErrors.create('api:extops:not-found', params);
  };
}

/** Lists every resource of `kind` in `namespace` with its latest version, by name (a deleted one is not listed). */
export async function listResources(db: Queryable, namespace: string, kind: ResourceKind): Promise<ResourceSummary[]> {
  const { rows } = await db.query<{ name: string; version: number; enabled: boolean }>(
    'SELECT name, version, enabled FROM (SELECT DISTINCT ON (name) name, version, enabled, hash ' +
      'FROM mt_resource_versions WHERE namespace = $1 AND kind = $2 ORDER BY name, version DESC) latest ' +
      'WHERE hash <> $3 ORDER BY name',
    [namespace, kind, DELETED_HASH],
  );
  return rows.map((row) => ({ name: row.name, latestVersion: row.version, enabled: row.enabled }));
}

/** A tool in a list: its latest version, and whether a call of it can be made at all. */
export type ToolSummary = wire.ExtopSummary;

/** Lists every tool of `namespace` with its latest version and whether that version can be called, by name. */
export async function listTools(db: Queryable, namespace: string): Promise<ToolSummary[]> {
  const { rows } = await db.query<{
    name: string;
    version: number;
    enabled: boolean;
    connector: string | null;
    connector_version: number | null;
    connector_enabled: boolean | null;
  }>(
    'SELECT t.name, t.version, t.enabled, p.name AS connector, p.version AS connector_version, ' +
      'c.enabled AS connector_enabled FROM (SELECT DISTINCT ON (name) name, version, enabled, pins, hash ' +
      "FROM mt_resource_versions WHERE namespace = $1 AND kind = 'tool' ORDER BY name, version DESC) t " +
      'LEFT JOIN LATERAL (SELECT * FROM json_to_recordset(t.pins) AS x(kind text, name text, version int) ' +
      "WHERE x.kind = 'connector' LIMIT 1) p ON true " +
      "LEFT JOIN mt_resource_versions c ON c.namespace = $1 AND c.kind = 'connector' " +
      'AND c.name = p.name AND c.version = p.version WHERE t.hash <> $2 ORDER BY t.name',
    [namespace, DELETED_HASH],
  );
  return rows.map((row) => {
    const summary: ToolSummary = { name: row.name, latestVersion: row.version, enabled: row.enabled, callable: true };
    if (!row.enabled) {
      summary.callable = false;
      summary.reason = `version ${row.version} is disabled`;
    } else if (row.connector_enabled === false) {
      summary.callable = false;
      summary.reason = `connector ${row.connector} version ${row.connector_version} is disabled`;
    }
    return summary;
  });
}

/**
 * Reads one version of a resource of any kind (the latest when `version` is omitted); undefined when absent. A
 * deleted resource has no latest version, but its versions stay readable by number: runs pinned to them read them.
 */
export async function getAnyVersion<R = unknown>(
  db: Queryable,
  namespace: string,
  kind: ResourceKind,
  name: string,
  version?: number,
): Promise<StoredVersion<R> | undefined> {
  return readVersion<R>(db, namespace, kind, name, version, false);
}

async function readVersion<R>(
  db: Queryable,
  namespace: string,
  kind: ResourceKind,
  name: string,
  version: number | undefined,
  hideDeleted: boolean,
): Promise<StoredVersion<R> | undefined> {
  const { rows } = await db.query<{
    name: string;
    version: number;
    enabled: boolean;
    created_at: Date;
    hash: string;
    resource: R;
    pins: Pin[];
    definition: ToolDefinition | null;
    deleted: boolean;
  }>(
    'SELECT name, version, enabled, created_at, hash, resource, pins, definition, ' +
      (hideDeleted && version !== undefined
        ? '(SELECT l.hash = $5 FROM mt_resource_versions l WHERE l.namespace = $1 AND l.kind = $2 AND l.name = $3 ' +
          'ORDER BY l.version DESC LIMIT 1) AS deleted '
        : 'false AS deleted ') +
      'FROM mt_resource_versions WHERE namespace = $1 AND kind = $2 AND name = $3 AND ($4::int IS NULL OR version = $4::int) ' +
      'ORDER BY version DESC LIMIT 1',
    hideDeleted && version !== undefined
      ? [namespace, kind, name, version, DELETED_HASH]
      : [namespace, kind, name, version ?? null],
  );
  const row = rows[0];
  // The marker is no version; under it (a deleted resource) there is no latest, and for a person no version at all.
  if (!row || row.hash === DELETED_HASH || row.deleted) return undefined;
  return {
    name: row.name,
    version: row.version,
    enabled: row.enabled,
    createdAt: iso(row.created_at),
    hash: row.hash,
    resource: row.resource,
    pins: row.pins,
    definition: row.definition,
  };
}

/**
 * Reads one version of a resource (the latest when `version` is omitted); `notFound` makes the error when it is
 * not there, by default the store's for connectors and tools (agents and interactions must pass theirs). What a
 * person reads: a deleted resource is not found, by any version (a run's pinned reads use {@link getAnyVersion}).
 */
export async function getVersion<K extends VersionedKind>(
  db: Queryable,
  namespace: string,
  kind: K,
  name: string,
  version?: number,
): Promise<StoredVersion<ResourceOf<K>>>;
export async function getVersion<K extends ResourceKind>(
  db: Queryable,
  namespace: string,
  kind: K,
  name: string,
  version: number | undefined,
  notFoundError: NotFoundError,
): Promise<StoredVersion<ResourceOf<K>>>;
export async function getVersion(
  db: Queryable,
  namespace: string,
  kind: ResourceKind,
  name: string,
  version?: number,
  notFoundError?: NotFoundError,
): Promise<StoredVersion> {
  const stored = await readVersion(db, namespace, kind, name, version, true);
  if (!stored) {
    const suggestion = await nameSuggestion(db, namespace, kind, name);
    throw (notFoundError ?? notFound(kind as VersionedKind))(name, version, suggestion);
  }
  return stored;
}

/** Lists the versions of a resource, newest first; `notFound` as for {@link getVersion}. */
export async function listVersions(
  db: Queryable,
  namespace: string,
  kind: VersionedKind,
  name: string,
): Promise<VersionSummary[]>;
export async function listVersions(
  db: Queryable,
  namespace: string,
  kind: ResourceKind,
  name: string,
  notFoundError: NotFoundError,
): Promise<VersionSummary[]>;
export async function listVersions(
  db: Queryable,
  namespace: string,
  kind: ResourceKind,
  name: string,
  notFoundError?: NotFoundError,
): Promise<VersionSummary[]> {
  const { rows: all } = await db.query<{
    version: number;
    enabled: boolean;
    created_at: Date;
    deployed_by: string | null;
    hash: string;
  }>(
    'SELECT version, enabled, created_at, deployed_by, hash FROM mt_resource_versions ' +
      'WHERE namespace = $1 AND kind = $2 AND name = $3 ORDER BY version DESC',
    [namespace, kind, name],
  );
  // A deleted resource has none; one deleted and deployed again lists its versions without the marker between.
  const rows = all[0]?.hash === DELETED_HASH ? [] : all.filter((row) => row.hash !== DELETED_HASH);
  if (rows.length === 0) {
    const suggestion = await nameSuggestion(db, namespace, kind, name);
    throw (notFoundError ?? notFound(kind as VersionedKind))(name, undefined, suggestion);
  }
  return rows.map((row) => ({
    version: row.version,
    enabled: row.enabled,
    createdAt: iso(row.created_at),
    deployedBy: row.deployed_by,
  }));
}

/**
 * Disables or enables one version of a connector or tool (waking `resources:<namespace>`); takes effect on the next
 * call, on every server. With `audit`, call it in a transaction: the change and its audit row commit together.
 */
export async function setVersionEnabled(
  db: Queryable,
  namespace: string,
  kind: VersionedKind,
  name: string,
  version: number,
  enabled: boolean,
  /** Who changes it: one `version.enabled` or `version.disabled` row, written with the change. */
  audit?: AuditContext,
): Promise<wire.VersionState> {
  // The update steps the cache epoch (schema 7): every server reads it before its next request or call. `was`: the
  // state before, as the statement's snapshot saw it.
  const { rows } = await db.query<{ was: boolean }>(
    'WITH old AS (SELECT enabled FROM mt_resource_versions ' +
      'WHERE namespace = $1 AND kind = $2 AND name = $3 AND version = $4), ' +
      'changed AS (UPDATE mt_resource_versions SET enabled = $5 ' +
      'WHERE namespace = $1 AND kind = $2 AND name = $3 AND version = $4 ' +
      // A deleted resource has no version to switch (decision 0295).
      'AND (SELECT l.hash FROM mt_resource_versions l WHERE l.namespace = $1 AND l.kind = $2 AND l.name = $3 ' +
      'ORDER BY l.version DESC LIMIT 1) <> $6 RETURNING 1) ' +
      `SELECT (SELECT enabled FROM old) AS was, pg_notify('${WAKE_CHANNEL}', 'resources:' || $1::text) FROM changed`,
    [namespace, kind, name, version, enabled, DELETED_HASH],
  );
  if (rows.length === 0) throw notFound(kind)(name, version, await nameSuggestion(db, namespace, kind, name));
  if (audit !== undefined) {
    await recordAudit(db, {
      ...audit,
      namespace,
      action: enabled ? 'version.enabled' : 'version.disabled',
      target: { kind, id: `${name}@${version}` },
      before: { enabled: rows[0].was },
      after: { enabled },
    });
  }
  return { name, version, enabled };
}
