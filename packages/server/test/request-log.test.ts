import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { createEgressPolicy } from '@maitento/egress';
import { createServer } from '@maitento/server';
import { createPgDb, type Db } from '@maitento/store';
import { createTestDatabase, type TestDatabase } from '@maitento/testkit';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const SECRET_VALUE = 'sk-request-log-5e4d3c2b1a';
const adminKey = `mt_${randomBytes(24).toString('base64url')}`;
let database: TestDatabase;
const opened: { app: FastifyInstance; db: Db }[] = [];

async function serverWithLogs(slowMs?: string): Promise<{ app: FastifyInstance; lines: Record<string, unknown>[] }> {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  const previous = process.env.MT_LOG_SLOW_MS;
  if (slowMs === undefined) delete process.env.MT_LOG_SLOW_MS;
  else process.env.MT_LOG_SLOW_MS = slowMs;
  try {
    const db = createPgDb(database.url);
    const app = await createServer({
      db,
      secretKey: randomBytes(32),
      egress: createEgressPolicy({ allow: '127.0.0.1/32' }),
      bootstrapKey: adminKey,
      logger: { level: 'info', stream },
    });
    opened.push({ app, db });
    return { app, lines };
  } finally {
    if (previous === undefined) delete process.env.MT_LOG_SLOW_MS;
    else process.env.MT_LOG_SLOW_MS = previous;
  }
}

const requestLines = (lines: Record<string, unknown>[]) =>
  lines.filter((line) =>
    ['request', 'slow request', 'request failed', 'incoming request', 'request completed'].includes(String(line.msg)),
  );

beforeAll(async () => {
  database = await createTestDatabase('mt_reqlog', { migrated: true });
});

afterAll(async () => {
  for (const { app, db } of opened) {
    await app.close();
    await db.close();
  }
  await database?.drop();
});

describe('request logging', () => {
  it('writes nothing at info for requests that went well or were refused', async () => {
    const { app, lines } = await serverWithLogs();
    const ok = await app.inject({ method: 'GET', url: '/v1/keys', headers: { authorization: `Bearer ${adminKey}` } });
    expect(ok.statusCode).toBe(200);
    const refused = await app.inject({ method: 'GET', url: '/v1/keys', headers: { authorization: 'Bearer mt_wrong' } });
    expect(refused.statusCode).toBe(401);
    expect(requestLines(lines)).toEqual([]);
  });

  it('logs a slow request once, with its method, route, status and time, and no key or secret value', async () => {
    const { app, lines } = await serverWithLogs('0');
    const created = await app.inject({
      method: 'POST',
      url: '/v1/secrets',
      headers: { authorization: `Bearer ${adminKey}` },
      payload: { name: 'logged-secret', value: SECRET_VALUE },
    });
    expect(created.statusCode).toBe(201);
    const logged = requestLines(lines);
    expect(logged).toEqual([
      expect.objectContaining({ msg: 'slow request', method: 'POST', route: '/v1/secrets', statusCode: 201 }),
    ]);
    expect(typeof logged[0].responseTimeMs).toBe('number');
    // The request's logger is made when the line is written (logging.ts), with fastify's request id as before.
    expect(logged[0].reqId).toEqual(expect.any(String));
    const text = JSON.stringify(lines);
    expect(text).not.toContain(SECRET_VALUE);
    expect(text).not.toContain(adminKey);
  });
});
