import type { ResourceKind } from '@maitento/lang';
import { TERMINAL_RUN_STATUSES } from '@maitento/sdk/wire';
import { type AuditContext, recordAudit } from '../audit/audit.js';
import type { Db, Queryable } from '../db/db.js';
import { storeErrors } from '../errors.js';
import { notifyWake, wakeTopics } from '../wake/notify.js';
import { DELETED_HASH, type NotFoundError, nameSuggestion } from './versions.js';

// Deleting a resource (decision 0295): a marker version after its last one hides it, every version no unfinished run
// pins is disabled, and the versions such runs pin stay as they are until those runs end.

/** Held per namespace by deploys and deletions alike, so the two never interleave. */
export const DEPLOY_LOCK_CLASS = 7_357_003;

/** The versions of one resource that unfinished runs pin, and those runs (oldest first). */
export interface ActivePins {
  versions: Set<number>;
  runs: string[];
}

/**
 * For each of `targets`, the versions that runs not yet ended (running, waiting for an approval, an authorisation
 * or a budget) pin and which runs: a run's `versions` list its interaction, agents, tools and connectors; an auth
 * provider is pinned through the connector versions such a run pins. Targets no such run pins are absent.
 */
export async function activePins(
  q: Queryable,
  namespace: string,
  targets: ReadonlyArray<{ kind: ResourceKind; name: string }>,
): Promise<Map<string, ActivePins>> {
  const out = new Map<string, ActivePins>();
  if (targets.length === 0) return out;
  const { rows } = await q.query<{ id: string; kind: string; name: string; version: number }>(
    'WITH active AS (SELECT r.id, r.created_at, p.kind, p.name, p.version FROM mt_runs r, ' +
      'jsonb_to_recordset(r.versions) AS p(kind text, name text, version int) ' +
      'WHERE r.namespace = $1 AND r.status <> ALL($2::text[])), ' +
      'wanted AS (SELECT * FROM jsonb_to_recordset($3::jsonb) AS w(kind text, name text)) ' +
      'SELECT a.id, a.created_at, a.kind, a.name, a.version FROM active a JOIN wanted w ON w.kind = a.kind AND w.name = a.name ' +
      "UNION SELECT a.id, a.created_at, 'auth-provider', pp.name, pp.version FROM active a " +
      "JOIN mt_resource_versions c ON c.namespace = $1 AND c.kind = 'connector' AND a.kind = 'connector' " +
      'AND c.name = a.name AND c.version = a.version, ' +
      'json_to_recordset(c.pins) AS pp(kind text, name text, version int) ' +
      "JOIN wanted w ON w.kind = 'auth-provider' AND w.name = pp.name WHERE pp.kind = 'auth-provider' " +
      'ORDER BY created_at, id',
    [namespace, [...TERMINAL_RUN_STATUSES], JSON.stringify(targets.map(({ kind, name }) => ({ kind, name })))],
  );
  for (const row of rows) {
    const key = `${row.kind}:${row.name}`;
    const entry = out.get(key) ?? { versions: new Set<number>(), runs: [] };
    out.set(key, entry);
    entry.versions.add(row.version);
    if (!entry.runs.includes(row.id)) entry.runs.push(row.id);
  }
  return out;
}

/**
 * Marks resources deleted in the caller's transaction: one marker version after each one's `latest` (disabled,
 * recording `deployedBy`), and every enabled version disabled but those in `keep` (what unfinished runs pin).
 * Wakes `resources:<namespace>` (and the schedulers when a schedule goes); the inserts and updates step the cache
 * epoch, so every server forgets the latest versions it knew.
 */
export async function markDeleted(
  tx: Queryable,
  namespace: string,
  rows: ReadonlyArray<{ kind: ResourceKind; name: string; latest: number; keep: ReadonlySet<number> }>,
  deployedBy: string | null,
): Promise<void> {
  if (rows.length === 0) return;
  const payload = rows.map((row) => ({
    kind: row.kind,
    name: row.name,
    version: row.latest + 1,
    resource: { kind: row.kind, name: row.name, deleted: true },
    keep: [...row.keep],
  }));
  await tx.query(
    'UPDATE mt_resource_versions v SET enabled = false FROM jsonb_to_recordset($2::jsonb) ' +
      'AS r(kind text, name text, keep int[]) ' +
      'WHERE v.namespace = $1 AND v.kind = r.kind AND v.name = r.name AND v.enabled AND v.version <> ALL(r.keep)',
    [namespace, JSON.stringify(payload)],
  );
  await tx.query(
    'INSERT INTO mt_resource_versions (namespace, kind, name, version, hash, resource, pins, definition, enabled, deployed_by) ' +
      "SELECT $1, r.kind, r.name, r.version, $3, r.resource, '[]', NULL, false, $4 " +
      'FROM json_to_recordset($2::json) AS r(kind text, name text, version int, resource json)',
    [namespace, JSON.stringify(payload), DELETED_HASH, deployedBy],
  );
  await notifyWake(tx, wakeTopics.resources(namespace));
  if (rows.some((row) => row.kind === 'schedule')) await notifyWake(tx, wakeTopics.schedules);
}

/** What {@link deleteResource} did. */
export interface ResourceDeletion {
  kind: ResourceKind;
  name: string;
  /** The last version before the deletion. */
  version: number;
}

/**
 * Deletes a resource (`DELETE /v1/connectors/{name}` and the other kinds): refused with `api:resources:pinned`
 * naming the run while an unfinished run pins any version of it, and with `api:resources:referenced` while the
 * latest version of a resource not deleted pins it (deleting that one first, or deploying it without the
 * reference, lets this go). Serialised with deploys to the namespace; one `resource.deleted` audit row with it.
 */
export async function deleteResource(
  db: Db,
  namespace: string,
  kind: ResourceKind,
  name: string,
  options: { notFound: NotFoundError; audit?: AuditContext },
): Promise<ResourceDeletion> {
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [DEPLOY_LOCK_CLASS, namespace]);
    const { rows } = await tx.query<{ version: number; hash: string }>(
      'SELECT version, hash FROM mt_resource_versions WHERE namespace = $1 AND kind = $2 AND name = $3 ' +
        'ORDER BY version DESC LIMIT 1',
      [namespace, kind, name],
    );
    const latest = rows[0];
    if (latest === undefined || latest.hash === DELETED_HASH) {
      throw options.notFound(name, undefined, await nameSuggestion(tx, namespace, kind, name));
    }
    const pinned = (await activePins(tx, namespace, [{ kind, name }])).get(`${kind}:${name}`);
    if (pinned !== undefined) {
      throw storeErrors.create(
        'api:resources:pinned',
        {
          kind,
          name,
          run: pinned.runs[0]!,
          more: pinned.runs.length > 1 ? ` (and ${pinned.runs.length - 1} more)` : '',
        },
        { details: { runs: pinned.runs } },
      );
    }
    // The latest version of each live resource of the namespace that pins this one.
    const { rows: referrers } = await tx.query<{ kind: string; name: string }>(
      'SELECT kind, name FROM (SELECT DISTINCT ON (kind, name) kind, name, hash, pins FROM mt_resource_versions ' +
        'WHERE namespace = $1 ORDER BY kind, name, version DESC) latest ' +
        "WHERE hash <> $4 AND pins::jsonb @> jsonb_build_array(jsonb_build_object('kind', $2::text, 'name', $3::text)) " +
        'ORDER BY kind, name LIMIT 1',
      [namespace, kind, name, DELETED_HASH],
    );
    const referrer = referrers[0];
    if (referrer !== undefined) {
      throw storeErrors.create('api:resources:referenced', {
        kind,
        name,
        refKind: referrer.kind,
        refName: referrer.name,
      });
    }
    const deployedBy = options.audit?.actor.kind === 'key' ? options.audit.actor.keyId : null;
    await markDeleted(tx, namespace, [{ kind, name, latest: latest.version, keep: new Set() }], deployedBy);
    if (options.audit !== undefined) {
      await recordAudit(tx, {
        ...options.audit,
        namespace,
        action: 'resource.deleted',
        target: { kind, id: name },
        before: { version: latest.version },
      });
    }
    return { kind, name, version: latest.version };
  });
}
