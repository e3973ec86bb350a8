import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { modelsFromEnvironment } from '@maitento/engine';
import { createEgressPolicy } from '@maitento/egress';
import { readConfigRepo } from '@maitento/lang';
import { createServer } from '@maitento/server';
import { createPgDb, createPgliteDb, type Db } from '@maitento/store';
import { databaseDrivers, freePort } from '@maitento/testkit';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auth } from './helpers.js';

// The contract's ask-handbook interaction end to end, from the example repo as it is (its connector's URL set to
// this server): a handbook of Markdown, PDF and HTML added over REST, a scripted model that searches, the
// search-handbook call reaching this server's own API with a platform token and the run's bound partitionId.
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const handbookFile = (name: string) => readFileSync(join(ROOT, 'test/fixtures/handbook', name));
const EXAMPLE_PLATFORM_URL = 'http://127.0.0.1:8080';

interface Seen {
  keyId: string;
  namespace: string;
  body: { partitionId?: string; query?: string };
}

const drivers = databaseDrivers('mt_ask_handbook', { pg: createPgDb, pglite: createPgliteDb });

describe.each(drivers)('ask-handbook on %s', { timeout: 60_000 }, (_driver, open) => {
  let db: Db;
  let done: () => Promise<void>;
  let app: FastifyInstance;
  let handbook: string;
  let otherKb: string;
  let foreignKb: string;
  const seen: Seen[] = [];
  const adminKey = `mt_${randomBytes(24).toString('base64url')}`;
  const scriptsDir = mkdtempSync(join(tmpdir(), 'mt-ask-handbook-scripts-'));

  const request = (method: 'GET' | 'POST', url: string, payload?: unknown, key = adminKey) =>
    app.inject({ method, url, headers: auth(key), payload: payload as never });

  async function addFile(kb: string, name: string, type: string, key = adminKey) {
    const res = await app.inject({
      method: 'POST',
      url: `/v1/knowledge-bases/${kb}/documents?name=${name}`,
      headers: { ...auth(key), 'content-type': type },
      payload: handbookFile(name),
    });
    expect(res.statusCode, res.body).toBe(201);
  }

  async function finished(id: string) {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const run = (await request('GET', `/v1/runs/${id}`)).json();
      if (run.status !== 'Running') return run;
      if (Date.now() > deadline) throw new Error(`run still ${run.status}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  async function ask(script: unknown[], partitionId: string) {
    writeFileSync(join(scriptsDir, 'handbook.json'), JSON.stringify(script));
    const started = await request('POST', '/v1/interactions/ask-handbook/runs', {
      inputs: { question: 'How long is parental leave?', partitionId },
      interactive: false,
    });
    expect(started.statusCode, started.body).toBe(201);
    const run = await finished(started.json().id);
    const events = (await request('GET', `/v1/runs/${run.id}/events`)).json() as {
      type: string;
      data: Record<string, unknown>;
    }[];
    const result = events.find((e) => e.type === 'tool-result')?.data;
    return { run, result, found: JSON.parse(String(result?.result ?? '{}')) };
  }

  beforeAll(async () => {
    ({ db, done } = await open());
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    app = await createServer({
      db,
      secretKey: randomBytes(32),
      egress: createEgressPolicy(),
      bootstrapKey: adminKey,
      platformOrigin: origin,
      logger: false,
      worker: { concurrency: 2 },
      engineOptions: { models: modelsFromEnvironment({ scriptsDir }), modelRetries: 0 },
    });
    // What reaches the knowledge search: whose key (a platform token's id is `platform-token`) and which body.
    app.addHook('preHandler', async (req) => {
      if (req.url === '/v1/knowledge-bases/search') {
        seen.push({ keyId: req.identity.keyId, namespace: req.identity.namespace, body: req.body as Seen['body'] });
      }
    });
    await app.listen({ port, host: '127.0.0.1' });
    const files = (await readConfigRepo(ROOT)).map((file) => ({
      path: file.path,
      content: file.content
        .replace(EXAMPLE_PLATFORM_URL, origin)
        .replace(
          /^model = ".*"$/m,
          file.path === 'agents/handbook-assistant.mtr' ? 'model = "scripted:handbook"' : '$&',
        ),
    }));
    expect((await request('POST', '/v1/secrets', { name: 'orders-api-key', value: 'v' })).statusCode).toBe(201);
    const deployed = await request('POST', '/v1/deploy', { files });
    expect(deployed.statusCode, deployed.body).toBe(200);

    handbook = (await request('POST', '/v1/knowledge-bases', { name: 'handbook' })).json().id;
    await addFile(handbook, 'leave.md', 'text/markdown');
    await addFile(handbook, 'expenses.pdf', 'application/pdf');
    await addFile(handbook, 'equipment.html', 'text/html');
    // Another knowledge base of the namespace, with a passage on parental leave too, and one of another namespace.
    otherKb = (await request('POST', '/v1/knowledge-bases', { name: 'secret-board-minutes' })).json().id;
    const minutes = await app.inject({
      method: 'POST',
      url: `/v1/knowledge-bases/${otherKb}/documents?name=minutes.md`,
      headers: { ...auth(adminKey), 'content-type': 'text/markdown' },
      payload: '# Board minutes\n\nParental leave will be cut to 8 weeks next year (confidential).\n',
    });
    expect(minutes.statusCode).toBe(201);
    const ns = (await request('POST', '/v1/namespaces', { name: 'acme' })).json();
    foreignKb = (await request('POST', '/v1/knowledge-bases', { name: 'acme-handbook' }, ns.key.key)).json().id;
  }, 120_000);

  afterAll(async () => {
    await app?.close();
    await done?.();
    rmSync(scriptsDir, { recursive: true, force: true });
  });

  it('searches the bound knowledge base with a platform token, and answers from a passage of the right document', async () => {
    seen.length = 0;
    const { run, result, found } = await ask(
      [
        {
          toolCalls: [
            { name: 'search-handbook', arguments: { request: { query: 'How many weeks of parental leave?' } } },
          ],
        },
        { text: 'Parents have 16 weeks of paid parental leave (leave.md, "Leave > Parental leave").' },
      ],
      handbook,
    );
    expect(run.status).toBe('Completed');
    expect(result, JSON.stringify(result)).toMatchObject({ ok: true, status: 200 });
    expect(seen).toEqual([
      {
        keyId: 'platform-token',
        namespace: 'default',
        body: { query: 'How many weeks of parental leave?', partitionId: handbook },
      },
    ]);
    const top = found.results[0];
    expect(top).toMatchObject({ document: { name: 'leave.md' }, title: 'Leave > Parental leave' });
    expect(top.text).toContain('16 weeks');
    expect(run.result).toContain(top.document.name);
    expect(run.result).toContain(top.title);
    expect(JSON.stringify(found)).not.toContain('8 weeks');
  });

  it('keeps the bound partitionId when the model asks for another knowledge base', async () => {
    seen.length = 0;
    const { result, found } = await ask(
      [
        {
          toolCalls: [
            {
              name: 'search-handbook',
              arguments: { request: { query: 'parental leave weeks', partitionId: otherKb } },
            },
          ],
        },
        { text: 'Done.' },
      ],
      handbook,
    );
    // The run fixes partitionId: a model that sends one is refused before anything is sent.
    expect(result, JSON.stringify(result)).toMatchObject({ ok: false, code: 'api:gateway:argument-bound' });
    expect(seen).toEqual([]);
    expect(JSON.stringify(found)).not.toContain('8 weeks');
  });

  it("reaches nothing of another namespace, even when a run binds that namespace's id", async () => {
    seen.length = 0;
    const { run, result } = await ask(
      [
        { toolCalls: [{ name: 'search-handbook', arguments: { request: { query: 'parental leave' } } }] },
        { text: 'Done.' },
      ],
      foreignKb,
    );
    expect(run.status).toBe('Completed');
    expect(result, JSON.stringify(result)).toMatchObject({ ok: false, status: 404 });
    expect(String(result?.result)).toContain('api:knowledge:not-found');
    expect(seen).toEqual([{ keyId: 'platform-token', namespace: 'default', body: expect.anything() }]);
  });
});
