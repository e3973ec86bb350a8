import type { Queryable } from '../db/db.js';
import type { Pin } from '../resources/hash.js';

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
