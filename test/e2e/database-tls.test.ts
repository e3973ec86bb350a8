import { randomBytes } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { certificateChain, type PostgresServer, startPostgresServer } from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe } from './helpers/processes.js';
import { requireBuiltCli, runMt, tempHome } from './support/harness.js';

// The real processes against a PostgreSQL with TLS (a certificate chain made here): `mt serve` starts and serves
// with sslmode=verify-full and the right CA; `mt worker` given another CA stops at once naming the problem.
let server: PostgresServer;
let home: string;
const secretKey = randomBytes(32).toString('hex');

beforeAll(async () => {
  requireBuiltCli();
  home = await tempHome();
  const chain = certificateChain(['localhost']);
  await writeFile(join(home, 'ca.pem'), chain.ca);
  await writeFile(join(home, 'other-ca.pem'), certificateChain(['localhost']).ca);
  server = await startPostgresServer({ tls: { cert: chain.cert + chain.ca, key: chain.key } });
}, 60_000);

afterAll(async () => {
  server?.stop();
  if (home) await rm(home, { recursive: true, force: true });
});

const databaseUrl = (ca: string) =>
  `postgres://postgres@localhost:${server.port}/postgres?sslmode=verify-full&sslrootcert=${join(home, ca)}`;

describe('mt serve and mt worker on PostgreSQL with TLS', { timeout: 90_000 }, () => {
  it('mt serve with sslmode=verify-full and the CA that signed the certificate migrates and answers', async () => {
    const serve = await startServe(home, { DATABASE_URL: databaseUrl('ca.pem'), MT_SECRET_KEY: secretKey });
    try {
      const health = await fetch(`${serve.url}/health`);
      expect(health.status).toBe(200);
    } finally {
      await serve.stop();
    }
  });

  it('mt worker given another CA exits at once with api:store:tls: self-signed certificate in chain', async () => {
    const started = performance.now();
    const result = await runMt(['worker'], {
      home,
      env: { DATABASE_URL: databaseUrl('other-ca.pem'), MT_SECRET_KEY: secretKey },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('error [api:store:tls]');
    expect(result.stderr).toContain('self-signed certificate in chain');
    expect(result.stderr).toContain('sslmode=verify-full');
    expect(result.stderr).not.toContain('did not answer');
    expect(performance.now() - started).toBeLessThan(10_000);
  });
});
