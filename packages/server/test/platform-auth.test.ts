import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { modelsFromEnvironment } from '@maitento/engine';
import { createEgressPolicy } from '@maitento/egress';
import { createServer } from '@maitento/server';
import { createPgDb, type Db, issuePlatformToken } from '@maitento/store';
import { createTestDatabase, type TestDatabase, freePort } from '@maitento/testkit';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auth } from './helpers.js';

// A real server listening on 127.0.0.1, whose own URL is its platform origin: a connector with
// auth = "Maitento" calls it back through the gateway with a short-lived token of the caller's namespace.
let database: TestDatabase;
let db: Db;
let app: FastifyInstance;
let origin: string;
const secretKey = randomBytes(32);
const adminKey = `mt_${randomBytes(24).toString('base64url')}`;
const scriptsDir = mkdtempSync(join(tmpdir(), 'mt-platform-scripts-'));

beforeAll(async () => {
  database = await createTestDatabase('mt_platform', { migrated: true });
  db = createPgDb(database.url);
  const port = await freePort();
  origin = `http://127.0.0.1:${port}`;
  app = await createServer({
    db,
    secretKey,
    egress: createEgressPolicy(),
    bootstrapKey: adminKey,
    platformOrigin: origin,
    logger: false,
    worker: { concurrency: 2 },
    engineOptions: { models: modelsFromEnvironment({ scriptsDir }), modelRetries: 0 },
  });
  await app.listen({ port, host: '127.0.0.1' });
  const files = [
    {
      path: 'connectors/open-api/maitento-connectors.mtr',
      content: `method = "GET"\nurl = "${origin}/v1/connectors"\ndescription = "The connectors of this namespace"\nauth = "Maitento"\n`,
    },
    {
      path: 'external-operations/open-api/list-connectors.mtr',
      content: 'connector = @ref("maitento-connectors")\nguidance = "Lists the deployed connectors"\n',
    },
    {
      path: 'external-operations/open-api/list-connectors-asked.mtr',
      content:
        'connector = @ref("maitento-connectors")\nguidance = "Lists the deployed connectors"\nrequiresApproval = true\n',
    },
    {
      path: 'agents/auditor-agent.mtr',
      content:
        'model = "scripted:auditor"\ninstructions = "Audit the connectors."\nfunctions = [ { ref = @ref("list-connectors-asked") } ]\n',
    },
    {
      path: 'interactions/one-shot/audit.mtr',
      content: 'agent = { name = "Auditor" agent = @ref("auditor-agent") }\ntask = "List the connectors."\n',
    },
  ];
  writeFileSync(
    join(scriptsDir, 'auditor.json'),
    JSON.stringify([{ toolCalls: [{ name: 'list-connectors-asked', arguments: {} }] }, { text: 'Audited.' }]),
  );
  const deployed = await app.inject({ method: 'POST', url: '/v1/deploy', headers: auth(adminKey), payload: { files } });
  expect(deployed.statusCode, deployed.body).toBe(200);
});

afterAll(async () => {
  await app?.close();
  await db?.close();
  await database?.drop();
});

describe('auth = "Maitento" connectors', () => {
  it("call the platform's own API with a token of the caller's namespace, and get its answer", async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/v1/extops/list-connectors/call',
      headers: auth(adminKey),
      payload: { arguments: {} },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      ok: true,
      status: 200,
      body: [{ name: 'maitento-connectors', latestVersion: 1, enabled: true }],
    });
  });

  it('get a token that may read but not change anything, and that no other server key accepts', async () => {
    const token = issuePlatformToken(secretKey, 'default');
    const read = await app.inject({ method: 'GET', url: '/v1/extops', headers: auth(token) });
    expect(read.statusCode).toBe(200);
    const write = await app.inject({
      method: 'POST',
      url: '/v1/secrets',
      headers: auth(token),
      payload: { name: 'x', value: 'y' },
    });
    expect([write.statusCode, write.json().code]).toEqual([403, 'api:auth:forbidden']);
    const expired = issuePlatformToken(secretKey, 'default', Date.now() - 10 * 60_000);
    expect((await app.inject({ method: 'GET', url: '/v1/extops', headers: auth(expired) })).statusCode).toBe(401);
    const foreign = issuePlatformToken(randomBytes(32), 'default');
    expect((await app.inject({ method: 'GET', url: '/v1/extops', headers: auth(foreign) })).statusCode).toBe(401);
  });

  it('complete a call that requires approval after a person approves it: the fresh platform token is not in the approved hash', async () => {
    const started = await app.inject({
      method: 'POST',
      url: '/v1/interactions/audit/runs',
      headers: auth(adminKey),
      payload: {},
    });
    expect(started.statusCode, started.body).toBe(201);
    const id = started.json().id as string;
    const until = async (done: (run: { status: string }) => boolean) => {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const run = (await app.inject({ method: 'GET', url: `/v1/runs/${id}`, headers: auth(adminKey) })).json();
        if (done(run)) return run;
        if (Date.now() > deadline) throw new Error(`run still ${run.status}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    const waiting = await until((run) => run.status !== 'Running');
    expect(waiting.status).toBe('PendingApproval');
    const approved = await app.inject({
      method: 'POST',
      url: `/v1/approvals/${waiting.pendingApproval.id}/approve`,
      headers: auth(adminKey),
      payload: {},
    });
    expect(approved.statusCode, approved.body).toBe(200);
    expect((await until((run) => run.status !== 'Running')).status).toBe('Completed');
    const events = (await app.inject({ method: 'GET', url: `/v1/runs/${id}/events`, headers: auth(adminKey) })).json();
    const result = (events as { type: string; data: Record<string, unknown> }[]).find((e) => e.type === 'tool-result');
    expect(result?.data).toMatchObject({ ok: true, status: 200, code: null });
    expect(String(result?.data.result)).toContain('maitento-connectors');
  });
});
