import { randomBytes } from 'node:crypto';
import { createPgDb, type Db } from '@maitento/store';
import { createTestDatabase, type FakeEmbeddings, startFakeEmbeddings, type TestDatabase } from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServeProcess, startServe } from './helpers/processes.js';
import { requireBuiltCli, tempHome } from './support/harness.js';

// A real `mt serve` (its worker embeds knowledge base passages) is killed with SIGKILL while the embedding model
// answers a batch; a new one on the same PostgreSQL database finishes the document: every passage once, with a
// vector, and the batch stored before the kill is not asked for again.
const PASSAGES = 150; // three batches of 64, 64 and 22
let database: TestDatabase;
let db: Db;
let home: string;
let fake: FakeEmbeddings;
let server: ServeProcess | undefined;
const adminKey = `mt_${randomBytes(24).toString('base64url')}`;
const secretKey = randomBytes(32).toString('hex');

function serve() {
  return startServe(home, {
    DATABASE_URL: database.url,
    MT_SECRET_KEY: secretKey,
    MT_BOOTSTRAP_KEY: adminKey,
    MT_EMBEDDING_MODEL: 'openai:fake-embedding',
    OPENAI_BASE_URL: fake.baseURL,
  });
}

async function call(method: string, path: string, body?: string, type = 'application/json') {
  const res = await fetch(`${server!.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${adminKey}`, ...(body === undefined ? {} : { 'content-type': type }) },
    body,
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

async function until(what: string, done: () => boolean | Promise<boolean>, ms = 30_000) {
  const deadline = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

beforeAll(async () => {
  requireBuiltCli();
  database = await createTestDatabase('mt_kb_embed_kill');
  db = createPgDb(database.url);
  home = await tempHome();
  // Each answer takes 1.5 s: time to kill the server while a batch is asked for.
  fake = await startFakeEmbeddings({ delayMs: 1500 });
});

afterAll(async () => {
  await server?.stop();
  await fake?.close();
  await db?.close();
  await database?.drop();
});

describe('a worker killed with SIGKILL while it embeds', { timeout: 120_000 }, () => {
  it('finishes the document after a restart, every passage once', async () => {
    server = await serve();
    const kb = await call('POST', '/v1/knowledge-bases', JSON.stringify({ name: 'big' }));
    expect(kb.status).toBe(201);
    const markdown = Array.from({ length: PASSAGES }, (_, i) => `# Topic ${i}\n\nPassage number ${i} of the manual.\n`);
    const added = await call(
      'POST',
      `/v1/knowledge-bases/${kb.json.id}/documents?name=manual.md`,
      markdown.join('\n'),
      'text/markdown',
    );
    expect(added.status).toBe(201);
    expect(added.json).toMatchObject({ status: 'embedding', chunkCount: PASSAGES });
    const embedded = async () =>
      Number(
        (await db.query<{ n: string }>('SELECT count(*) AS n FROM mt_kb_chunks WHERE embedding IS NOT NULL')).rows[0].n,
      );
    // The first batch is stored, the second is being answered: kill now.
    await until('the second batch asked for', async () => fake.inputs.length >= 2 && (await embedded()) === 64);
    await server.kill();
    server = undefined;
    expect(await embedded()).toBe(64);
    const [first, second] = fake.inputs;

    server = await serve();
    const status = async () =>
      (await db.query<{ status: string }>('SELECT status FROM mt_kb_documents')).rows[0].status;
    await until('the document ready', async () => (await status()) === 'ready');
    const { rows } = await db.query<{ total: string; with_vector: string; distinct_positions: string }>(
      'SELECT count(*) AS total, count(embedding) AS with_vector, count(DISTINCT position) AS distinct_positions ' +
        'FROM mt_kb_chunks',
    );
    expect(rows[0]).toEqual({
      total: String(PASSAGES),
      with_vector: String(PASSAGES),
      distinct_positions: String(PASSAGES),
    });
    // After the restart the second batch was asked for again, the first was not.
    const after = fake.inputs.slice(2).flat();
    expect(after).toEqual(expect.arrayContaining(second));
    expect(after.filter((text) => first.includes(text))).toEqual([]);
    expect(after).toHaveLength(PASSAGES - 64);
  });
});
