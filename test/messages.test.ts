import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { readConfigRepo } from '@maitento/lang';
import { Maitento } from '@maitento/sdk';
import { type RunningServer, startServer } from '@maitento/server';
import { createTestDatabase, type TestDatabase } from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// issue #22, item 7: messages a newcomer meets, against a real server with the example repo deployed and the
// real `mt` (the compiled CLI, as a user runs it).
const root = fileURLToPath(new URL('../', import.meta.url));
const ADMIN_KEY = `mt_msg_${randomBytes(16).toString('hex')}`;
let db: TestDatabase;
let server: RunningServer;
let mt: Maitento;

function cli(args: string[]) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [`${root}packages/cli/bin/mt.js`, ...args],
      { env: { PATH: process.env.PATH ?? '', MT_API_URL: server.url, MT_API_KEY: ADMIN_KEY }, timeout: 30_000 },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
    );
  });
}

async function messageOf(call: Promise<unknown>): Promise<string> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(Error);
  return (error as Error).message;
}

beforeAll(async () => {
  db = await createTestDatabase('mt_messages');
  server = await startServer({
    port: 0,
    databaseUrl: db.url,
    secretKey: randomBytes(32).toString('hex'),
    bootstrapKey: ADMIN_KEY,
    platformOrigin: 'http://127.0.0.1:8080',
    logger: false,
    message: () => {},
  });
  mt = new Maitento({ baseUrl: server.url, apiKey: ADMIN_KEY, maxRetries: 0 });
  await mt.secrets.create({ name: 'orders-api-key', value: 'v' });
  await mt.deploy.create({ files: await readConfigRepo(root) });
});

afterAll(async () => {
  await server?.close();
  await db?.drop();
});

describe('a misspelt name gets a did-you-mean', () => {
  it('mt interaction-run wether: error [api:interactions:not-found] ... did you mean "weather"?', async () => {
    const res = await cli(['interaction-run', 'wether', '--input', 'place=Paris']);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(
      'error [api:interactions:not-found]: No interaction wether in this namespace; did you mean "weather"?',
    );
  });

  it('interactions, agents and tools read by a misspelt name', async () => {
    expect(await messageOf(mt.interactions.get('ask-handbok'))).toBe(
      'No interaction ask-handbok in this namespace; did you mean "ask-handbook"?',
    );
    expect(await messageOf(mt.agents.get('suport-agent'))).toBe(
      'No agent suport-agent in this namespace; did you mean "support-agent"?',
    );
    expect(await messageOf(mt.extops.get('get-ordre'))).toBe(
      'No tool get-ordre in this namespace; did you mean "get-order"?',
    );
  });

  it('says nothing more when no name is close, or when the name exists and only the version does not', async () => {
    expect(await messageOf(mt.interactions.get('zzzzzzzz'))).toBe('No interaction zzzzzzzz in this namespace');
    expect(await messageOf(mt.agents.get('support-agent', { version: 9 }))).toBe(
      'No agent support-agent version 9 in this namespace',
    );
  });
});
