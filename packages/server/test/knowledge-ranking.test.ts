import { randomBytes } from 'node:crypto';
import { createOpenAI } from '@ai-sdk/openai';
import { createEgressPolicy } from '@maitento/egress';
import { createServer } from '@maitento/server';
import { createPgDb, createPgliteDb, type Db } from '@maitento/store';
import { databaseDrivers, type FakeEmbeddings, startFakeEmbeddings } from '@maitento/testkit';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auth } from './helpers.js';

// Ranking in both modes on one fixture whose expected top results are known: full-text search alone (no model),
// and hybrid, with a deterministic embedding model behind a fake OpenAI-compatible endpoint on 127.0.0.1 that the
// AI SDK's OpenAI provider calls. The fake model puts "vacation", "holiday" and "leave" on one dimension, and
// "computer" and "laptop" on another: words a question may use that the passage does not.
const CONCEPTS = [
  ['vacation', 'holiday', 'leave'],
  ['computer', 'laptop', 'notebook'],
];
const HANDBOOK = `# Leave

Every employee has 25 days of annual leave a year.

# Working hours

The working time is 38 hours a week, between 7 and 19 o'clock.

# Equipment

A laptop is issued on the first day.
`;

const drivers = databaseDrivers('mt_kb_ranking', { pg: createPgDb, pglite: createPgliteDb });

describe.each(drivers)('knowledge ranking on %s', { timeout: 60_000 }, (_driver, open) => {
  let db: Db;
  let done: () => Promise<void>;
  let fake: FakeEmbeddings;
  let fullTextOnly: FastifyInstance;
  let hybrid: FastifyInstance;
  let kb: string;
  const adminKey = `mt_${randomBytes(24).toString('base64url')}`;
  const secretKey = randomBytes(32);

  const top = async (app: FastifyInstance, query: string) => {
    const res = await app.inject({
      method: 'POST',
      url: `/v1/knowledge-bases/${kb}/search`,
      headers: auth(adminKey),
      payload: { query },
    });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json().results as { title: string }[]).map((r) => r.title);
  };

  beforeAll(async () => {
    ({ db, done } = await open());
    fake = await startFakeEmbeddings({ concepts: CONCEPTS });
    const model = createOpenAI({ baseURL: fake.baseURL, apiKey: 'test-key' }).embedding('fake-embedding');
    const common = { db, secretKey, egress: createEgressPolicy(), bootstrapKey: adminKey, logger: false as const };
    hybrid = await createServer({ ...common, embeddingModel: model, worker: { concurrency: 1 } });
    fullTextOnly = await createServer({ ...common, embeddingModel: null });
    kb = (
      await hybrid.inject({
        method: 'POST',
        url: '/v1/knowledge-bases',
        headers: auth(adminKey),
        payload: { name: 'hb' },
      })
    ).json().id;
  }, 120_000);

  afterAll(async () => {
    await hybrid?.close();
    await fullTextOnly?.close();
    await fake?.close();
    await done?.();
  });

  it('embeds the passages in the worker, and the document says when it is done', async () => {
    const added = await hybrid.inject({
      method: 'POST',
      url: `/v1/knowledge-bases/${kb}/documents?name=handbook.md`,
      headers: { ...auth(adminKey), 'content-type': 'text/markdown' },
      payload: HANDBOOK,
    });
    expect(added.statusCode, added.body).toBe(201);
    expect(added.json().status).toBe('embedding');
    const id = added.json().id;
    const deadline = Date.now() + 20_000;
    let status = 'embedding';
    while (status !== 'ready' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const doc = await hybrid.inject({
        method: 'GET',
        url: `/v1/knowledge-bases/${kb}/documents/${id}`,
        headers: auth(adminKey),
      });
      status = doc.json().status;
    }
    expect(status).toBe('ready');
    // One batch for the three passages, each embedded with its title.
    expect(fake.inputs.flat()).toEqual([
      'Leave\n\nEvery employee has 25 days of annual leave a year.',
      "Working hours\n\nThe working time is 38 hours a week, between 7 and 19 o'clock.",
      'Equipment\n\nA laptop is issued on the first day.',
    ]);
  });

  it('ranks by full-text search alone without a model: a word no passage holds finds nothing', async () => {
    expect(await top(fullTextOnly, 'How much vacation do I get?')).toEqual([]);
    expect(await top(fullTextOnly, 'Which computer do I get?')).toEqual([]);
    expect((await top(fullTextOnly, 'What is the working time?'))[0]).toBe('Working hours');
  });

  it('fuses full-text and vector rankings with a model: the passage that means the question comes first', async () => {
    expect((await top(hybrid, 'How much vacation do I get?'))[0]).toBe('Leave');
    expect((await top(hybrid, 'Which computer do I get?'))[0]).toBe('Equipment');
    expect((await top(hybrid, 'What is the working time?'))[0]).toBe('Working hours');
  });
});
