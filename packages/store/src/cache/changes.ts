import type { Queryable } from '../db/db.js';

/** The PostgreSQL channel every cache-relevant change is announced on (`NOTIFY mt_changes, '<json>'`). */
export const CHANGE_CHANNEL = 'mt_changes';

/**
 * A change that makes cached data stale: a deploy or a version's enabled flag (`resources`), a deleted API
 * key (`key`), a rotated or deleted secret (`secret`).
 */
export type StoreChange =
  | { kind: 'resources'; namespace: string }
  | { kind: 'key'; namespace: string; id: string }
  | { kind: 'secret'; namespace: string; id: string };

/** The NOTIFY payload of `change`. */
export function changePayload(change: StoreChange): string {
  return JSON.stringify(change);
}

/** Reads a NOTIFY payload back; undefined when it is not one of ours. */
export function parseChange(payload: string): StoreChange | undefined {
  try {
    const value = JSON.parse(payload) as Partial<StoreChange> & { id?: unknown };
    if (typeof value?.namespace !== 'string') return undefined;
    if (value.kind === 'resources') return { kind: 'resources', namespace: value.namespace };
    if ((value.kind === 'key' || value.kind === 'secret') && typeof value.id === 'string') {
      return { kind: value.kind, namespace: value.namespace, id: value.id };
    }
    return undefined;
  } catch {
    return undefined;
  }
}

/**
 * Announces `change` on {@link CHANGE_CHANNEL}. Run it in the transaction that makes the change: PostgreSQL
 * delivers the notification at commit, and not at all on rollback.
 */
export async function notifyChange(tx: Queryable, change: StoreChange): Promise<void> {
  await tx.query('SELECT pg_notify($1, $2)', [CHANGE_CHANNEL, changePayload(change)]);
}
