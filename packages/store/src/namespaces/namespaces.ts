import type { Queryable } from '../db/db.js';
import { storeErrors } from '../errors.js';
import { isUniqueViolation, iso } from '../internal/rows.js';

/** A namespace: every record belongs to exactly one. */
export interface Namespace {
  name: string;
  createdAt: string;
}

/** The namespace an empty database gets, whose admin keys are the operator's. */
export const DEFAULT_NAMESPACE = 'default';

/** Creates a namespace; a name already taken is `api:namespaces:exists`. */
export async function createNamespace(db: Queryable, name: string): Promise<Namespace> {
  try {
    const { rows } = await db.query<{ name: string; created_at: Date }>(
      'INSERT INTO mt_namespaces (name) VALUES ($1) RETURNING name, created_at',
      [name],
    );
    return { name: rows[0].name, createdAt: iso(rows[0].created_at) };
  } catch (error) {
    if (isUniqueViolation(error)) throw storeErrors.create('api:namespaces:exists', { name });
    throw error;
  }
}

/** Returns the namespace named `name`, or undefined. */
export async function findNamespace(db: Queryable, name: string): Promise<Namespace | undefined> {
  const { rows } = await db.query<{ name: string; created_at: Date }>(
    'SELECT name, created_at FROM mt_namespaces WHERE name = $1',
    [name],
  );
  return rows[0] && { name: rows[0].name, createdAt: iso(rows[0].created_at) };
}
