import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

function cli(args: string[], cwd = root) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [`${root}packages/cli/bin/mt.js`, ...args],
      { cwd, env: { PATH: process.env.PATH ?? '', MT_API_URL: server.url, MT_API_KEY: ADMIN_KEY }, timeout: 30_000 },
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
  for (const dir of repos) rmSync(dir, { recursive: true, force: true });
});

// A config repo of one tool whose connector calls `host`.
const repos: string[] = [];
function repoCalling(host: string): string {
  const repo = mkdtempSync(join(tmpdir(), 'mt-messages-'));
  repos.push(repo);
  mkdirSync(join(repo, 'connectors/open-api'), { recursive: true });
  mkdirSync(join(repo, 'external-operations/open-api'), { recursive: true });
  writeFileSync(
    join(repo, 'connectors/open-api/ping.mtr'),
    `method = "GET"\nurl = "http://${host}/ping"\ndescription = "Pings"\n`,
  );
  writeFileSync(join(repo, 'external-operations/open-api/ping.mtr'), 'connector = @ref("ping")\nguidance = "Pings."\n');
  return repo;
}

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

describe('hints that point at the fix', () => {
  it('a secret name where an id belongs points at mt secret-list', async () => {
    const res = await cli([
      'interaction-run',
      'support-any-shop',
      '--input',
      'message=hi',
      '--input',
      'shopKey=orders-api-key',
    ]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(
      "error [api:interactions:input-invalid]: requires valid GUID for secret ID shopKey - but value is: orders-api-key; pass the secret's id, not its name (`mt secret-list` shows them)",
    );
  });

  it('plain localhost is named as itself, not as "names ending in .localhost"', async () => {
    const res = await cli(['check', repoCalling('localhost:3000')]);
    expect(res.code).toBe(1);
    expect(res.stdout + res.stderr).toContain('hint: localhost is a special-use or internal name, never a public one.');
    expect(res.stdout + res.stderr).not.toContain('.localhost');
  });

  it('a name that does not resolve (mt extop-call) mentions MT_RESOLVE', async () => {
    // `.example` is reserved (RFC 2606): no public DNS answers it, on line or off.
    const res = await cli(['extop-call', 'ping', '--dry-run'], repoCalling('api.no-such-host.example'));
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(
      /^error \[api:egress:name-not-resolved\]: Maitento could not resolve api\.no-such-host\.example: /m,
    );
    expect(res.stderr).toContain('`MT_RESOLVE=HOST=IP mt extop-call ... --dry-run` gives the name a fixed address');
  });
});
