import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPgDb, type Db, migrate, openWakeups, pgConnectionConfig } from '@maitento/store';
import { certificateChain, type PostgresServer, startPostgresServer, TEST_SERVER_URL } from '@maitento/testkit';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// sslmode with libpq's meaning, against a PostgreSQL of the test's own with ssl = on and a certificate chain made
// here (a CA, and a server certificate it signed for "localhost"; the server sends both, as a managed database
// with a private CA does). A certificate problem fails at once with api:store:tls naming it, not after the
// statement deadline as "the database did not answer".
let server: PostgresServer;
let dir: string;
let rightCa: string;
let wrongCa: string;
const opened: Db[] = [];

function url(host: string, params: Record<string, string>): string {
  const u = new URL(server.url);
  u.hostname = host;
  for (const [name, value] of Object.entries(params)) u.searchParams.set(name, value);
  return u.toString();
}

function open(connectionString: string): Db {
  const db = createPgDb(connectionString, { applicationName: 'mt-tls-test' });
  opened.push(db);
  return db;
}

/** Whether this connection of `db` is encrypted, as the server sees it. */
async function encrypted(db: Db): Promise<boolean> {
  const { rows } = await db.query<{ ssl: boolean }>('SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()');
  return rows[0].ssl;
}

/** The error `work` rejects with, and how long it took. */
async function refusal(work: Promise<unknown>): Promise<{ error: { code?: string; message: string }; ms: number }> {
  const started = performance.now();
  const error = await work.then(
    () => {
      throw new Error('expected a refusal');
    },
    (e: unknown) => e as { code?: string; message: string },
  );
  return { error, ms: performance.now() - started };
}

beforeAll(async () => {
  const chain = certificateChain(['localhost']);
  wrongCa = certificateChain(['localhost']).ca;
  rightCa = chain.ca;
  dir = mkdtempSync(join(tmpdir(), 'mt-pg-tls-'));
  writeFileSync(join(dir, 'right-ca.pem'), rightCa);
  writeFileSync(join(dir, 'wrong-ca.pem'), wrongCa);
  server = await startPostgresServer({ tls: { cert: chain.cert + chain.ca, key: chain.key } });
}, 60_000);

afterAll(async () => {
  await Promise.all(opened.map((db) => db.close().catch(() => {})));
  server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('sslmode in DATABASE_URL', () => {
  it('verify-full with the CA that signed the certificate: the store opens and migrates, encrypted', async () => {
    const db = open(url('localhost', { sslmode: 'verify-full', sslrootcert: join(dir, 'right-ca.pem') }));
    expect((await migrate(db)).length).toBeGreaterThan(0);
    expect(await encrypted(db)).toBe(true);
  });

  it('the wake-up LISTEN connection is encrypted and checked the same way', async () => {
    const db = open(url('localhost', { sslmode: 'verify-full', sslrootcert: join(dir, 'right-ca.pem') }));
    const wakeups = await openWakeups(db, { deadlineMs: 5000 });
    try {
      expect(wakeups.listening).toBe(true);
      const { rows } = await db.query<{ ssl: boolean }>(
        `SELECT s.ssl FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid) WHERE a.application_name = 'mt-tls-test-wake'`,
      );
      expect(rows).toEqual([{ ssl: true }]);
    } finally {
      await wakeups.close();
    }
    const refused = open(url('localhost', { sslmode: 'verify-full', sslrootcert: join(dir, 'wrong-ca.pem') }));
    const lost = await openWakeups(refused, { deadlineMs: 5000, retryMs: 60_000 });
    try {
      expect(lost.listening).toBe(false);
    } finally {
      await lost.close();
    }
  });

  it('verify-full with another CA is refused at once with api:store:tls naming the problem', async () => {
    const db = open(url('localhost', { sslmode: 'verify-full', sslrootcert: join(dir, 'wrong-ca.pem') }));
    const { error, ms } = await refusal(migrate(db));
    expect(error.code).toBe('api:store:tls');
    expect(error.message).toContain('self-signed certificate in chain');
    expect(error.message).toContain('sslmode=verify-full');
    expect(ms).toBeLessThan(1500);
  });

  it('verify-full by a host name the certificate does not name is refused: host name mismatch', async () => {
    const db = open(url('127.0.0.1', { sslmode: 'verify-full', sslrootcert: join(dir, 'right-ca.pem') }));
    const { error } = await refusal(db.query('SELECT 1'));
    expect(error.code).toBe('api:store:tls');
    expect(error.message).toContain('host name mismatch');
  });

  it('verify-ca checks the chain only: the same host is accepted, another CA is not', async () => {
    const db = open(url('127.0.0.1', { sslmode: 'verify-ca', sslrootcert: join(dir, 'right-ca.pem') }));
    expect(await encrypted(db)).toBe(true);
    const wrong = open(url('127.0.0.1', { sslmode: 'verify-ca', sslrootcert: join(dir, 'wrong-ca.pem') }));
    expect((await refusal(wrong.query('SELECT 1'))).error.code).toBe('api:store:tls');
  });

  it('require encrypts without checking the certificate: a self-signed chain is accepted', async () => {
    const db = open(url('127.0.0.1', { sslmode: 'require' }));
    expect(await encrypted(db)).toBe(true);
  });

  it('require with a root certificate checks the chain, as libpq does', async () => {
    const db = open(url('127.0.0.1', { sslmode: 'require', sslrootcert: join(dir, 'wrong-ca.pem') }));
    expect((await refusal(db.query('SELECT 1'))).error.code).toBe('api:store:tls');
  });

  it('PGSSLROOTCERT and PGSSLMODE apply when the URL names neither', async () => {
    const env = { PGSSLMODE: 'verify-full', PGSSLROOTCERT: join(dir, 'right-ca.pem') };
    const client = new pg.Client(pgConnectionConfig(url('localhost', {}), undefined, env).config);
    await client.connect();
    try {
      const { rows } = await client.query('SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()');
      expect(rows[0].ssl).toBe(true);
    } finally {
      await client.end();
    }
    const wrong = pgConnectionConfig(url('localhost', {}), undefined, {
      ...env,
      PGSSLROOTCERT: join(dir, 'wrong-ca.pem'),
    });
    expect(wrong.config.ssl).toMatchObject({ ca: wrongCa });
  });

  it('require against a server without TLS is refused with api:store:tls, not a timeout', async () => {
    const plain = new URL(TEST_SERVER_URL);
    plain.searchParams.set('sslmode', 'require');
    const db = open(plain.toString());
    const { error, ms } = await refusal(db.query('SELECT 1'));
    expect(error.code).toBe('api:store:tls');
    expect(error.message).toContain('does not accept TLS');
    expect(ms).toBeLessThan(1500);
  });

  it('settings that cannot be used are refused with api:store:tls-config, without the password', () => {
    const base = 'postgres://app:s3cret-pass@db.example:5432/app';
    const cases = [
      `${base}?sslmode=verify-ca`,
      `${base}?sslmode=strict`,
      `${base}?sslmode=verify-full&sslrootcert=${join(dir, 'missing.pem')}`,
      `${base}?sslmode=require&sslrootcert=system`,
    ];
    for (const connectionString of cases) {
      let caught: { code?: string; message: string } | undefined;
      try {
        createPgDb(connectionString);
      } catch (error) {
        caught = error as { code?: string; message: string };
      }
      expect(caught?.code, connectionString).toBe('api:store:tls-config');
      expect(caught?.message).not.toContain('s3cret-pass');
    }
  });

  it('no sslmode: no TLS, whatever PGSSLMODE node-postgres would read itself is not set', () => {
    expect(pgConnectionConfig(url('localhost', {}), undefined, {}).config.ssl).toBe(false);
    expect(pgConnectionConfig(url('localhost', { sslmode: 'disable' }), undefined, {}).config.ssl).toBe(false);
  });
});
