import pg from 'pg';

/** A lock held by {@link holdLock} on a connection of its own. */
export interface HeldLock {
  /** Resolves once the lock is released (its transaction rolled back and its connection closed). */
  released: Promise<void>;
  /** Releases it now (before its time). */
  release(): Promise<void>;
}

/**
 * Takes `LOCK TABLE <table> IN <mode> MODE` (default ACCESS EXCLUSIVE) in a transaction on a separate real connection
 * to `url`, resolves once it is held, and releases it (rolls back, closes) after `ms`: statements of others that need
 * the table wait meanwhile, past their own deadlines, as behind a long migration or a stuck session. `table` is an
 * identifier the caller controls (quoted here); connecting and locking each have a 10 s deadline.
 */
export async function holdLock(url: string, table: string, ms: number, mode = 'ACCESS EXCLUSIVE'): Promise<HeldLock> {
  if (!/^[A-Z ]+$/.test(mode)) throw new Error(`not a lock mode: ${mode}`);
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000, statement_timeout: 10_000 });
  client.on('error', () => {});
  await client.connect();
  try {
    await client.query('BEGIN');
    await client.query(`LOCK TABLE ${client.escapeIdentifier(table)} IN ${mode} MODE`);
  } catch (error) {
    await client.end().catch(() => {});
    throw error;
  }
  let done: Promise<void> | undefined;
  let settle!: () => void;
  const released = new Promise<void>((resolve) => {
    settle = resolve;
  });
  const release = (): Promise<void> => {
    clearTimeout(timer);
    done ??= client
      .query('ROLLBACK')
      .catch(() => {})
      .then(() => client.end())
      .catch(() => {})
      .then(settle);
    return done;
  };
  const timer = setTimeout(release, ms);
  return { released, release };
}
