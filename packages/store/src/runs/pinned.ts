import type { ResourceKind } from '@maitento/lang';
import type { Queryable } from '../db/db.js';
import { iso } from '../internal/rows.js';
import type { Pin } from '../resources/hash.js';
import type { StoredVersion } from '../resources/versions.js';

/** Reads one version of a resource of any kind (the latest when `version` is omitted); undefined when absent. */
export async function getAnyVersion<R = unknown>(
  db: Queryable,
  namespace: string,
  kind: ResourceKind,
  name: string,
  version?: number,
): Promise<StoredVersion<R> | undefined> {
  const { rows } = await db.query<{
    name: string;
    version: number;
    enabled: boolean;
    created_at: Date;
    hash: string;
    resource: R;
    pins: Pin[];
    definition: StoredVersion['definition'];
  }>(
    'SELECT name, version, enabled, created_at, hash, resource, pins, definition FROM mt_resource_versions ' +
      'WHERE namespace = $1 AND kind = $2 AND name = $3 AND ($4::int IS NULL OR version = $4::int) ' +
      'ORDER BY version DESC LIMIT 1',
    [namespace, kind, name, version ?? null],
  );
  const row = rows[0];
  if (!row) return undefined;
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

/** Whether each of `pins` is enabled now, read fresh (a pin that does not exist counts as disabled). */
export async function pinsEnabled(db: Queryable, namespace: string, pins: Pin[]): Promise<boolean[]> {
  if (pins.length === 0) return [];
  const { rows } = await db.query<{ kind: string; name: string; version: number; enabled: boolean }>(
    'SELECT v.kind, v.name, v.version, v.enabled FROM mt_resource_versions v ' +
      'JOIN jsonb_to_recordset($2::jsonb) AS p(kind text, name text, version int) ' +
      'ON v.kind = p.kind AND v.name = p.name AND v.version = p.version WHERE v.namespace = $1',
    [namespace, JSON.stringify(pins)],
  );
  const found = new Map(rows.map((row) => [`${row.kind}:${row.name}:${row.version}`, row.enabled]));
  return pins.map((pin) => found.get(`${pin.kind}:${pin.name}:${pin.version}`) ?? false);
}
