// The embedding worker on a real PostgreSQL database (docs/architecture.md, "Timers"): a document stored through
// another process wakes it at once (`embeddings`), though its fallback poll is a minute long; and a batch the model
// refused is tried again by the fallback, wake-ups listening or not. The model is a local OpenAI-compatible endpoint.
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createOpenAI } from '@ai-sdk/openai';
import { startEmbeddingWorker } from '../src/knowledge/index.js';
import {
  bootstrap,
  createKnowledgeBase,
  createPgDb,
  type Db,
  getDocument,
  migrate,
  openWakeups,
  putDocument,
  type Wakeups,
} from '@maitento/store';
import { createTestDatabase, fakeEmbedding, type TestDatabase } from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let database: TestDatabase;
let writer: Db;
let workerDb: Db;
let wakeups: Wakeups;
let model: Server;
let baseURL: string;
// Requests the model answers 400 before it answers again (the AI SDK does not retry a 400).
let refuse = 0;
let requests = 0;

async function until(what: () => Promise<boolean>, ms: number): Promise<number> {
  const began = performance.now();
  while (!(await what())) {
    if (performance.now() - began > ms) throw new Error(`not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return performance.now() - began;
}

beforeAll(async () => {
  database = await createTestDatabase('mt_embedding_worker');
  writer = createPgDb(database.url);
  await migrate(writer);
  await bootstrap(writer, { key: `mt_${randomBytes(24).toString('base64url')}` });
  workerDb = createPgDb(database.url);
  wakeups = await openWakeups(workerDb);
  model = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      requests++;
      if (refuse > 0) {
        refuse--;
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'refused by the test', type: 'invalid_request_error' } }));
        return;
      }
      const { input } = JSON.parse(body) as { input: string[] };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          object: 'list',
          data: input.map((text, index) => ({ object: 'embedding', index, embedding: fakeEmbedding(text, [], 16) })),
          usage: { prompt_tokens: 1, total_tokens: 1 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => model.listen(0, '127.0.0.1', resolve));
  baseURL = `http://127.0.0.1:${(model.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  await wakeups?.close();
  await workerDb?.close();
  await writer?.close();
  await new Promise((resolve) => model?.close(resolve));
  await database?.drop();
});

async function store(kb: string, name: string) {
  return putDocument(writer, 'default', kb, {
    name,
    contentType: 'text/markdown',
    bytes: 10,
    chunks: [{ title: name, text: `the text of ${name}` }],
    embedding: true,
  });
}

describe('the embedding worker', { timeout: 30_000 }, () => {
  it('embeds a document stored through another process at once, woken, with a fallback poll of a minute', async () => {
    const kb = await createKnowledgeBase(writer, 'default', { name: 'woken' });
    const worker = startEmbeddingWorker({
      db: workerDb,
      model: createOpenAI({ baseURL, apiKey: 'test' }).embedding('fake'),
      wakeups,
      pollMs: 60_000,
    });
    try {
      // Its first look (at start) found nothing: from here on only a wake-up makes it look.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const before = requests;
      const doc = await store(kb.id, 'a');
      const took = await until(
        async () => (await getDocument(writer, 'default', kb.id, doc.id)).status === 'ready',
        5000,
      );
      expect(took).toBeLessThan(5000);
      expect(requests - before).toBe(1);
    } finally {
      await worker.close();
    }
  });

  it('tries a refused batch again after its fallback period, though wake-ups are listening', async () => {
    const kb = await createKnowledgeBase(writer, 'default', { name: 'refused' });
    const worker = startEmbeddingWorker({
      db: workerDb,
      model: createOpenAI({ baseURL, apiKey: 'test' }).embedding('fake'),
      wakeups,
      pollMs: 300,
    });
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(wakeups.listening).toBe(true);
      refuse = 1;
      const before = requests;
      const doc = await store(kb.id, 'b');
      await until(async () => (await getDocument(writer, 'default', kb.id, doc.id)).status === 'ready', 5000);
      // The refused request, then the fallback's.
      expect(requests - before).toBe(2);
    } finally {
      await worker.close();
    }
  });
});
