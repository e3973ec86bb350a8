import pg from 'pg';
import type { Queryable } from '../db/db.js';

/** The schema pg-boss keeps the run queue in (its default). */
export const QUEUE_SCHEMA = 'pgboss';

/**
 * The statements that let `role` run `mt serve` and `mt worker` and nothing more (docs/operations.md, "A
 * least-privileged runtime role"): use of the schemas, reads and writes of every table and sequence there, pg-boss's
 * functions, and the same on what later migrations create (default privileges of the role that runs them).
 */
export function runtimeGrantStatements(role: string, schemas: string[]): string[] {
  const who = pg.escapeIdentifier(role);
  return schemas.flatMap((name) => {
    const schema = pg.escapeIdentifier(name);
    return [
      `GRANT USAGE ON SCHEMA ${schema} TO ${who}`,
      `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${schema} TO ${who}`,
      `GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA ${schema} TO ${who}`,
      `GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA ${schema} TO ${who}`,
      `ALTER DEFAULT PRIVILEGES IN SCHEMA ${schema} GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO ${who}`,
      `ALTER DEFAULT PRIVILEGES IN SCHEMA ${schema} GRANT USAGE, SELECT, UPDATE ON SEQUENCES TO ${who}`,
      `ALTER DEFAULT PRIVILEGES IN SCHEMA ${schema} GRANT EXECUTE ON FUNCTIONS TO ${who}`,
    ];
  });
}

/**
 * Grants `role` (which must exist) what a serving process needs on Maitento's schema (the connection's current one)
 * and pg-boss's, as the role that owns them: `mt migrate --grant-runtime ROLE`. Returns the statements it ran.
 */
export async function grantRuntimeRole(db: Queryable, role: string): Promise<string[]> {
  const { rows } = await db.query<{ schema: string }>('SELECT current_schema() AS schema');
  const statements = runtimeGrantStatements(role, [rows[0]?.schema ?? 'public', QUEUE_SCHEMA]);
  for (const statement of statements) await db.exec(statement);
  return statements;
}
