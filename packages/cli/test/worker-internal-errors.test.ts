import { randomBytes } from 'node:crypto';
import type { Resolver } from '@maitento/egress';
import type { Connector, Tool } from '@maitento/lang';
import { startWorker } from '@maitento/server';
import { createTestDatabase, type TestDatabase } from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workerLogger } from '../src/commands/worker.js';

// `mt worker` alone (startWorker on a real PostgreSQL, with the log `mt worker` writes): an unexpected error in a
// tool call reaches the operator's log with its stack, as it does with `mt serve`.
let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase('mt_cli_worker_errors');
});

afterAll(async () => {
  await database?.drop();
});

const connector: Connector = {
  kind: 'connector',
  name: 'c',
  method: 'GET',
  url: 'http://buggy.example.test/thing',
  description: 'test',
  parameters: { path: [], query: [] },
  schema: {},
  auth: 'None',
};

const tool: Tool = {
  kind: 'tool',
  name: 'get-thing',
  connector: 'c',
  guidance: 'test',
  bindings: { request: {}, query: {}, path: {} },
  requiresApproval: false,
};

// A resolver with a bug in it: what an unexpected failure inside Maitento looks like to the gateway.
const buggyResolver: Resolver = async () => [
  {
    get address(): string {
      throw new TypeError('a bug in buggyResolver');
    },
    family: 4,
  },
];

describe('mt worker and an internal error in a tool call', { timeout: 60_000 }, () => {
  it('logs the error with its stack and the tool, and the call answers api:gateway:internal without it', async () => {
    const lines: string[] = [];
    const worker = await startWorker({
      databaseUrl: database.url,
      secretKey: randomBytes(32).toString('hex'),
      resolver: buggyResolver,
      logger: workerLogger({ out: () => {}, err: (text) => lines.push(text) }),
    });
    try {
      const result = await worker.gateway.call({ tool, connector, arguments: {} });
      expect(result).toMatchObject({ ok: false, code: 'api:gateway:internal' });
      expect(result.error).not.toContain('buggyResolver');

      const logged = lines
        .map((line) => JSON.parse(line) as { level: string; msg?: string; tool?: string; err?: { stack?: string } })
        .filter((entry) => entry.msg === 'internal error in a tool call');
      expect(logged).toHaveLength(1);
      expect(logged[0]).toMatchObject({ level: 'error', tool: 'get-thing' });
      expect(logged[0].err?.stack).toContain('TypeError: a bug in buggyResolver');
      expect(logged[0].err?.stack).toMatch(/\n\s+at /);
    } finally {
      await worker.close();
    }
  });
});
