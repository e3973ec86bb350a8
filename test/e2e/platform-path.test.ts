import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import {
  createFakeOpenAI,
  createTestDatabase,
  type FakeModelRequest,
  type FakeModelServer,
  type FakeTurn,
  type TestDatabase,
  freePort,
} from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServeProcess, startServe } from './helpers/processes.js';
import { copyExampleRepo, requireBuiltCli, runMt, tempHome } from './support/harness.js';

// Issue #45 item 5: the example repo's platform tools (auth = "Maitento") name paths on the platform
// (`url = "/v1/..."`), so the same repo passes `mt check` whatever MT_PUBLIC_URL says and deploys unchanged to
// servers on any address. Two real `mt serve` processes, each on its own database and its own port: the first told
// its URL with MT_PUBLIC_URL, the second with none (it resolves the paths against its own address). The real `mt`
// deploys the one copy of the repo to both, and a run on the second calls its own file system API through
// list-files. The agents' model is the fake OpenAI-compatible server.
let home: string;
let repo: string;
let model: FakeModelServer;
const databases: TestDatabase[] = [];
const servers: ServeProcess[] = [];
const keys: string[] = [];

/** A port free on 127.0.0.1 right now (the server must listen on a known port to know its own address). */

/** The note keeper lists the notes, then answers with what the list said. */
function noteKeeper(request: FakeModelRequest): FakeTurn {
  const result = request.conversation.toolResults.at(-1);
  if (result === undefined) {
    return { toolCalls: [{ name: 'list-files', arguments: { additionalInputs: { 'query.prefix': 'notes/' } } }] };
  }
  return { text: `The list said: ${result.content}` };
}

function mt(args: string[], server: number, env: Record<string, string> = {}) {
  return runMt(args, {
    home,
    env: { MT_API_URL: servers[server].url, MT_API_KEY: keys[server], MT_PUBLIC_URL: '', ...env },
  });
}

beforeAll(async () => {
  requireBuiltCli();
  home = await tempHome();
  repo = await copyExampleRepo();
  model = await createFakeOpenAI({ respond: noteKeeper });
  for (const i of [0, 1]) {
    const database = await createTestDatabase(`mt_e2e_platform_path_${i}`, { migrated: true });
    databases.push(database);
    keys.push(`mt_${randomBytes(24).toString('base64url')}`);
    const port = await freePort();
    const server = await startServe(
      home,
      {
        DATABASE_URL: database.url,
        MT_SECRET_KEY: randomBytes(32).toString('hex'),
        MT_BOOTSTRAP_KEY: keys[i],
        OPENAI_API_KEY: 'sk-fake',
        OPENAI_BASE_URL: model.url,
        // The first is told its URL; the second knows none and uses its own address.
        MT_PUBLIC_URL: i === 0 ? `http://127.0.0.1:${port}` : '',
      },
      ['--port', String(port)],
    );
    expect(server.url).toBe(`http://127.0.0.1:${port}`);
    servers.push(server);
  }
  expect(servers[0].url).not.toBe(servers[1].url);
}, 180_000);

afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  await model?.close();
  for (const d of databases) await d.drop();
  for (const dir of [home, repo]) if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the example repo on servers at two addresses', { timeout: 180_000 }, () => {
  it('passes mt check with MT_PUBLIC_URL set to any address, or unset', async () => {
    for (const url of ['', 'http://127.0.0.1:8080', 'https://maitento.example.com', 'http://10.9.8.7:4321']) {
      const checked = await runMt(['check', repo], { home, env: { MT_PUBLIC_URL: url } });
      expect(checked.code, `MT_PUBLIC_URL=${url}\n${checked.stdout}${checked.stderr}`).toBe(0);
    }
  });

  it('deploys unchanged to both, and a platform tool call on the second port reaches that server', async () => {
    for (const i of [0, 1]) {
      const secret = await mt(['secret-create', 'orders-api-key', '--value', 'not-used-here'], i);
      expect(secret.code, secret.stderr).toBe(0);
      const deployed = await mt(['deploy', repo], i);
      expect(deployed.code, `${servers[i].url}\n${deployed.stdout}${deployed.stderr}`).toBe(0);
    }
    // A file system and a note on the second server, then a run there that lists them through list-files.
    const created = await mt(['fs-create', 'team-notes'], 1);
    expect(created.code, created.stderr).toBe(0);
    const id = created.stdout.trim();
    const put = await runMt(['fs-put', 'team-notes', 'notes/boiler.md'], {
      home,
      input: '# Boiler\n',
      env: { MT_API_URL: servers[1].url, MT_API_KEY: keys[1], MT_PUBLIC_URL: '' },
    });
    expect(put.code, put.stderr).toBe(0);
    const run = await mt(
      [
        'interaction-run',
        'keep-notes',
        '--input',
        'request=What notes are there?',
        '--input',
        `fileSystemId=${id}`,
        '--wait',
      ],
      1,
    );
    const output = run.stdout + run.stderr;
    expect(run.code, output).toBe(0);
    expect(output).toMatch(/list-files returned \(HTTP 200\): .*notes\/boiler\.md/);
    expect(output).toContain('The list said:');
  });
});
