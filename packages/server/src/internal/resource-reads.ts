import type { Agent, Interaction } from '@maitento/lang';
import { engineErrors } from '@maitento/engine';
import type { Pin, Queryable, VersionSummary } from '@maitento/store';
import { serverErrors } from '../errors.js';

/** The kinds read here (connectors and tools are read through the store's `getVersion`). */
export type RunnableKind = 'agent' | 'interaction';

/** One stored version of an agent or interaction. */
export interface StoredRunnable<R> {
  name: string;
  version: number;
  enabled: boolean;
  createdAt: string;
  hash: string;
  resource: R;
  pins: Pin[];
}

/** The resource stored for each kind. */
export type RunnableOf<K extends RunnableKind> = K extends 'agent' ? Agent : Interaction;

function iso(value: unknown): string {
  return value instanceof Date ? value.toISOString() : new Date(String(value)).toISOString();
}

function notFound(kind: RunnableKind, name: string, version?: number) {
  const params = { name, version: version === undefined ? '' : ` version ${version}` };
  return kind === 'agent'
    ? serverErrors.create('api:agents:not-found', params)
    : engineErrors.create('api:interactions:not-found', params);
}

/** Reads one version of an agent or interaction (the latest when `version` is omitted). */
export async function getRunnable<K extends RunnableKind>(
  db: Queryable,
  namespace: string,
  kind: K,
  name: string,
  version?: number,
): Promise<StoredRunnable<RunnableOf<K>>> {
  const { rows } = await db.query<{
    name: string;
    version: number;
    enabled: boolean;
    created_at: Date;
    hash: string;
    resource: RunnableOf<K>;
    pins: Pin[];
  }>(
    'SELECT name, version, enabled, created_at, hash, resource, pins FROM mt_resource_versions ' +
      'WHERE namespace = $1 AND kind = $2 AND name = $3 AND ($4::int IS NULL OR version = $4::int) ' +
      'ORDER BY version DESC LIMIT 1',
    [namespace, kind, name, version ?? null],
  );
  const row = rows[0];
  if (!row) throw notFound(kind, name, version);
  return {
    name: row.name,
    version: row.version,
    enabled: row.enabled,
    createdAt: iso(row.created_at),
    hash: row.hash,
    resource: row.resource,
    pins: row.pins,
  };
}

/** Lists the versions of an agent or interaction, newest first. */
export async function listRunnableVersions(
  db: Queryable,
  namespace: string,
  kind: RunnableKind,
  name: string,
): Promise<VersionSummary[]> {
  const { rows } = await db.query<{ version: number; enabled: boolean; created_at: Date }>(
    'SELECT version, enabled, created_at FROM mt_resource_versions ' +
      'WHERE namespace = $1 AND kind = $2 AND name = $3 ORDER BY version DESC',
    [namespace, kind, name],
  );
  if (rows.length === 0) throw notFound(kind, name);
  return rows.map((row) => ({ version: row.version, enabled: row.enabled, createdAt: iso(row.created_at) }));
}
