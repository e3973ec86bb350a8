import { randomBytes } from 'node:crypto';
import type { Resolver } from '@maitento/egress';
import type { Connector, Tool } from '@maitento/lang';
import { processLogger, startWorker } from '@maitento/server';
import { createTestDatabase, type TestDatabase } from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

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
      logger: processLogger((line) => lines.push(line)),
    });
    try {
      const result = await worker.gateway.call({ tool, connector, arguments: {} });
      expect(result).toMatchObject({ ok: false, code: 'api:gateway:internal' });
      expect(result.error).not.toContain('buggyResolver');

      const logged = lines
        .map((line) => JSON.parse(line) as { level: number; msg?: string; tool?: string; err?: { stack?: string } })
        .filter((entry) => entry.msg === 'internal error in a tool call');
      expect(logged).toHaveLength(1);
      // pino's level 50: error.
      expect(logged[0]).toMatchObject({ level: 50, tool: 'get-thing' });
      expect(logged[0].err?.stack).toContain('TypeError: a bug in buggyResolver');
      expect(logged[0].err?.stack).toMatch(/\n\s+at /);
      // Every line has the shape of `mt serve`'s (pino): time, pid, hostname.
      for (const line of lines)
        expect(Object.keys(JSON.parse(line))).toEqual(expect.arrayContaining(['time', 'pid', 'hostname']));

      // A call of a run: its line names the run.
      const runId = '0b7c3f0e-8d1a-4c52-9a3e-2f5d6b7c8d9e';
      const ofRun = await worker.gateway.call({ tool, connector, arguments: {}, runId });
      expect(ofRun).toMatchObject({ ok: false, code: 'api:gateway:internal' });
      const second = lines.map((line) => JSON.parse(line)).filter((e) => e.msg === 'internal error in a tool call');
      expect(second).toHaveLength(2);
      expect(second[1]).toMatchObject({ runId, tool: 'get-thing' });
      expect(second[0].runId).toBeUndefined();
    } finally {
      await worker.close();
    }
  });
});
