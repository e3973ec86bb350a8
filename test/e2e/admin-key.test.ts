import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { authenticateApiKey, createPgDb, createPgliteDb, type Db } from '@maitento/store';
import { copyPgliteTemplate, createTestDatabase, type TestDatabase } from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServeProcess, startServe } from './helpers/processes.js';
import { requireBuiltCli, runMt, tempHome } from './support/harness.js';

// The first admin key is made only by a server that listens, and an operator with the database can make
// a new admin key with `mt admin-key-create` (real `mt` processes, real PostgreSQL and PGlite).
let home: string;
let database: TestDatabase;
let env: Record<string, string>;
let busy: Server;
let busyPort: number;
let server: ServeProcess | undefined;

async function keyCount(db: Db): Promise<number> {
  const { rows } = await db.query<{ n: string }>('SELECT count(*)::text AS n FROM mt_api_keys');
  return Number(rows[0].n);
}

async function keysStatus(key: string): Promise<number> {
  if (server === undefined) throw new Error('no server');
  const res = await fetch(`${server.url}/v1/keys`, { headers: { authorization: `Bearer ${key}` } });
  await res.arrayBuffer();
  return res.status;
}

beforeAll(async () => {
  requireBuiltCli();
  home = await tempHome();
  database = await createTestDatabase('mt_admin_key');
  env = { DATABASE_URL: database.url, MT_SECRET_KEY: randomBytes(32).toString('hex') };
  busy = createServer();
  await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
  busyPort = (busy.address() as { port: number }).port;
});

afterAll(async () => {
  await server?.stop();
  await new Promise((resolve) => busy.close(resolve));
  await database.drop();
  await rm(home, { recursive: true, force: true });
});

describe('the first admin key', { timeout: 120_000 }, () => {
  it('is neither made nor printed by a server that cannot listen, and the next start prints one that works', async () => {
    const failed = await runMt(['serve', '--port', String(busyPort), '--host', '127.0.0.1'], { home, env });
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/EADDRINUSE|address already in use/);
    expect(failed.stderr).not.toMatch(/first admin key|mt_[A-Za-z0-9_-]{20,}/);
    const db = createPgDb(database.url);
    try {
      expect(await keyCount(db)).toBe(0);
    } finally {
      await db.close();
    }

    server = await startServe(home, env);
    const key = /first admin key \(shown once, keep it\):\n\s+(mt_\S+)/.exec(server.log())?.[1];
    expect(key).toBeDefined();
    expect(await keysStatus(key as string)).toBe(200);
  });
});

describe('mt admin-key-create', { timeout: 120_000 }, () => {
  it('makes a working admin key straight in PostgreSQL while the server runs, with no API key', async () => {
    const result = await runMt(['admin-key-create', '--name', 'recovery'], { home, env });
    expect(result.code).toBe(0);
    const key = result.stdout.trim();
    expect(key).toMatch(/^mt_[A-Za-z0-9_-]{43}$/);
    expect(result.stderr).toContain('created an admin key of namespace "default" (data: PostgreSQL (DATABASE_URL))');
    expect(await keysStatus(key)).toBe(200);
    expect(await keysStatus(`${key}x`)).toBe(401);
    const db = createPgDb(database.url);
    try {
      expect(await authenticateApiKey(db, key)).toMatchObject({ namespace: 'default', role: 'admin' });
    } finally {
      await db.close();
    }
  });

  it('refuses a namespace that does not exist', async () => {
    const result = await runMt(['admin-key-create', '--namespace', 'nope', '--json'], { home, env });
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({ code: 'api:namespaces:not-found' });
  });

  it('refuses a --data folder that holds no embedded database, instead of making one', async () => {
    const result = await runMt(['admin-key-create', '--data', join(home, 'no-such-data')], { home });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('error [api:cli:data-not-found]');
  });

  it('works on a PGlite data folder, where an empty database gets its first key', async () => {
    const data = join(home, 'data');
    // An empty PGlite database (initdb done, no Maitento tables), as a fresh `mt serve --data` leaves before migrating.
    await copyPgliteTemplate(join(data, 'pglite'));
    const first = await runMt(['admin-key-create', '--data', data], { home });
    expect(first.stderr).toContain('the database was empty: created namespace "default" and its first admin key');
    expect(first.code).toBe(0);
    const db = await createPgliteDb(join(data, 'pglite'));
    try {
      expect(await authenticateApiKey(db, first.stdout.trim())).toMatchObject({ namespace: 'default', role: 'admin' });
      expect(await keyCount(db)).toBe(1);
    } finally {
      await db.close();
    }
  });
});
