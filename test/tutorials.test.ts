import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { Maitento } from '@maitento/sdk';
import { createTestDatabase, type TestDatabase } from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServeProcess, startServe } from './e2e/helpers/processes.js';
import { startUpstream, type Upstream } from './e2e/helpers/upstream.js';
import { ROOT, requireBuiltCli, tempHome } from './e2e/support/harness.js';
import {
  allOutput,
  blocks,
  filePath,
  readTutorial,
  runTutorial,
  type TutorialOptions,
  writeNodeShim,
} from './tutorials/tutorial-runner.js';
import { copyProject, packedInstall } from './support/packed.js';

// The tutorials of docs/tutorials run as a reader would run them, in the folder layout they describe: a home of
// its own with ~/maitento-tutorials, where the packed CLI and SDK are installed (once for the file) and the
// scripted models' scripts are written, and the config repos the tutorials make in it (weather-config for
// tutorials 1 to 4, which build on each other, notes-config for tutorial 5). Every ```sh block runs with bash
// where the block before ended (a `cd` holds), with the installed `mt` (nothing of the clone on PATH), against
// a real `mt serve` on a PostgreSQL test database; every `// file:` block is written where the reader stands.
// The tutorials deploy into namespaces of their own, made with the first admin key. What the test changes, and
// why:
// - api.open-meteo.com cannot be reached from CI, so the connector's URL is rewritten to a local upstream
//   on 127.0.0.1 that answers like Open-Meteo (MT_EGRESS_ALLOW=127.0.0.1 lets the server call it).
// - The agents' `openai:gpt-4o-mini` becomes `scripted:<agent>`, as the tutorials tell a reader without a model
//   key to write, playing the scripts the tutorials write into ~/maitento-tutorials/scripted-models, so runs need
//   no model key and always take the same steps.
// - The orders API of tutorial 2 (docs/tutorials/code/orders-api.ts, the file the tutorial shows) runs on a
//   free port instead of 3000.
// - The file tools of tutorial 5 (auth = "Maitento") call the server's own URL, http://127.0.0.1:8080 in the
//   tutorial: the server runs on a free port chosen first, with MT_PUBLIC_URL its own URL, and the files name it.
// - The server runs on a free port instead of 8080, with MT_PUBLIC_URL set to it: tutorial 4's
//   `auth = "Maitento"` connector calls http://127.0.0.1:8080, which becomes that URL.

const TEAPOT_SHOP_KEY = `teapot-${randomBytes(8).toString('hex')}`;
const CUP_SHOP_KEY = `cup-${randomBytes(8).toString('hex')}`;

let db: TestDatabase;
let home: string;
let tutorials: string;
let state: string;
let upstream: Upstream;
let orders: { child: ChildProcess; origin: string };
let server: ServeProcess;
let options: TutorialOptions;

/** A port free on 127.0.0.1 right now (the server's own URL must be known before it starts, for MT_PUBLIC_URL). */
async function freePort(): Promise<number> {
  const probe = createNetServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** Starts the tutorial's own orders API file on a free port and waits for its `listening on` line. */
async function startOrdersApi(): Promise<{ child: ChildProcess; origin: string }> {
  const child = spawn(process.execPath, [join(ROOT, 'docs/tutorials/code/orders-api.ts')], {
    env: { PATH: process.env.PATH ?? '', PORT: '0', TEAPOT_SHOP_KEY, CUP_SHOP_KEY },
  });
  let log = '';
  const origin = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`orders API did not start:\n${log}`)), 15_000);
    const read = (c: Buffer) => {
      log += c.toString();
      const m = /listening on (http:\/\/\S+)/.exec(log);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    child.stdout.on('data', read);
    child.stderr.on('data', (c: Buffer) => {
      log += c.toString();
    });
    child.on('exit', (code) => reject(new Error(`orders API exited with ${code}:\n${log}`)));
  });
  child.removeAllListeners('exit');
  return { child, origin };
}

function rewrite(path: string, text: string): string {
  const agent = basename(path, '.mtr');
  return text
    .replaceAll('https://api.open-meteo.com', upstream.origin)
    .replaceAll('http://127.0.0.1:3000', orders.origin)
    .replaceAll('http://127.0.0.1:8080', server.url)
    .replace(/^model = "openai:gpt-4o-mini"$/m, `model = "scripted:${agent}"`);
}

beforeAll(async () => {
  requireBuiltCli();
  // The reader's home, and in it the folder tutorial 1 makes: the packed CLI and SDK installed there, once for
  // every tutorial (the skip-test block that does it for a reader). The scripted models' scripts go in its
  // scripted-models/, as the tutorials write them.
  home = await tempHome();
  tutorials = join(home, 'maitento-tutorials');
  state = await mkdtemp(join(tmpdir(), 'mt-tutorials-state-'));
  // The install (npm pack and npm install of the tarballs, made once a suite run and shared with
  // test/installed.test.ts: the longest part of this set-up, mostly waiting on npm), then its project copied into
  // ~/maitento-tutorials, goes on while the database, the upstreams and the server start: none of them reads the
  // folder it fills (the server reads the scripted models' folder at a run's first model call, after that).
  const installed = packedInstall().then((install) => copyProject(install, tutorials));
  // Awaited in the end whatever happens before, so a failed start leaves no npm running into afterAll's rm.
  installed.catch(() => undefined);
  try {
    await startServices();
  } finally {
    await installed;
  }
  await writeNodeShim(join(state, 'bin'));
}, 300_000);

/** The database, the upstream, the orders API and `mt serve`, and the tutorials' options that name them. */
async function startServices(): Promise<void> {
  db = await createTestDatabase('mt_tutorials', { migrated: true });
  upstream = await startUpstream();
  orders = await startOrdersApi();
  const adminKey = `mt_tutorial_${randomBytes(18).toString('hex')}`;
  const port = await freePort();
  const publicUrl = `http://127.0.0.1:${port}`;
  server = await startServe(
    home,
    {
      DATABASE_URL: db.url,
      MT_SECRET_KEY: randomBytes(32).toString('hex'),
      MT_BOOTSTRAP_KEY: adminKey,
      MT_EGRESS_ALLOW: '127.0.0.1',
      // Where a server started in ~/maitento-tutorials looks by default (tutorial 1 says so).
      MT_SCRIPTED_MODELS: join(tutorials, 'scripted-models'),
      MT_PUBLIC_URL: publicUrl,
    },
    ['--port', String(port)],
  );
  expect(server.url).toBe(publicUrl);
  options = {
    start: home,
    home,
    cwdFile: join(state, 'cwd'),
    binDir: join(state, 'bin'),
    stateFile: join(state, 'shell-state'),
    rewrite,
    // What the reader exported by hand in tutorial 1's skip-test block (the server's URL, the first admin key),
    // and the settings the tutorials ask for where the server runs.
    env: {
      MT_API_URL: server.url,
      MT_ADMIN_KEY: adminKey,
      MT_EGRESS_ALLOW: '127.0.0.1',
      MT_PUBLIC_URL: publicUrl,
      TEAPOT_SHOP_KEY,
      CUP_SHOP_KEY,
    },
  };
}

afterAll(async () => {
  await server?.stop();
  orders?.child.kill('SIGTERM');
  await upstream?.close();
  await db?.drop();
  for (const dir of [state, home]) if (dir) await rm(dir, { recursive: true, force: true });
});

/**
 * Runs one tutorial and fails with every block's output when a command exits non-zero. First it checks
 * that nothing escapes the test: every .mtr and TypeScript block is a `// file:` block, and every shell
 * block is a ```sh block (run) or marked `skip-test`.
 */
async function run(name: string): Promise<string> {
  const markdown = await readTutorial(name);
  const shown = blocks(markdown);
  for (const b of shown) {
    if (['mtr', 'ts', 'typescript'].includes(b.lang)) expect(filePath(b), `${name}: ${b.text}`).toBeDefined();
    if (['bash', 'shell', 'console', 'zsh'].includes(b.lang)) throw new Error(`${name}: use \`\`\`sh: ${b.text}`);
  }
  const commands = shown.filter((b) => b.lang === 'sh' && !b.info.includes('skip-test'));
  expect(commands.length).toBeGreaterThan(0);
  const results = await runTutorial(markdown, options);
  expect(results.length, allOutput(results)).toBe(commands.length);
  const output = allOutput(results);
  // MT_E2E_LOGS=1 prints what every block wrote, to read the tutorial's real output.
  if (process.env.MT_E2E_LOGS) console.error(output);
  for (const r of results) expect(r.code, output).toBe(0);
  return output;
}

describe('docs/tutorials run as written', () => {
  it('01-your-first-tool: check, dry-run, deploy, and two runs whose unit comes from the run input', async () => {
    const output = await run('01-your-first-tool.md');
    expect(output).toContain('current-weather');
    // The dry run printed the request with the bound `current` and the run input's unit, and sent nothing.
    expect(output).toMatch(/temperature_unit=fahrenheit/);
    expect(output).toContain('Lisbon: clear sky, mild, a light breeze.');
    // The `mt` of the commands is the one installed in ~/maitento-tutorials, not the clone's.
    expect(output).toContain(`${join(tutorials, 'node_modules/.bin/mt')}\n`);
    // The tutorial deployed into its own namespace: namespace default (the example repo's) has none of it.
    const admin = new Maitento({ baseUrl: server.url, apiKey: options.env.MT_ADMIN_KEY, maxRetries: 0 });
    expect((await admin.extops.list()).map((t) => t.name)).not.toContain('current-weather');
    const calls = upstream.requests.filter((r) => r.url.startsWith('/v1/forecast'));
    expect(calls.map((c) => new URL(c.url, 'http://x').searchParams.get('temperature_unit'))).toEqual([
      'celsius',
      'fahrenheit',
    ]);
    for (const c of calls) {
      const query = new URL(c.url, 'http://x').searchParams;
      expect(query.get('current')).toBe('temperature_2m,wind_speed_10m,weather_code');
      expect(query.get('latitude')).toBe('38.72');
    }
  }, 180_000);

  it('02-call-your-code shows the orders API file the test runs, unchanged', async () => {
    const shown = blocks(await readTutorial('02-call-your-code.md')).find((b) => filePath(b) === 'orders-api.ts');
    const shipped = await readFile(join(ROOT, 'docs/tutorials/code/orders-api.ts'), 'utf8');
    expect(shown?.text.replace(/^\/\/ file: \S+\n/, '')).toBe(shipped);
  });

  it('02-call-your-code: secrets, the get-order tool, and one agent serving two shops by the run-chosen secret', async () => {
    const output = await run('02-call-your-code.md');
    expect(output).toContain('teapot-shop-key');
    // The run of the teapot shop read its order; the cup shop's key reads only the cup shop's orders.
    expect(output).toMatch(/get-order returned \(HTTP 200\): .*Glass kettle/);
    expect(output).toMatch(/get-order failed \(HTTP 404\): .*no such order in Cup Shop/);
    // No key's value is ever printed.
    expect(output).not.toContain(TEAPOT_SHOP_KEY);
    expect(output).not.toContain(CUP_SHOP_KEY);
  }, 180_000);

  it('03-approvals: the run stops at the refund, a rejection gets a redraft, the approved one is made once, then the SDK', async () => {
    const output = await run('03-approvals.md');
    expect(output).toMatch(/waits for a person to approve this call:\n\s+tool:\s+refund-order/);
    expect(output).toContain('"amount": 49.9');
    // The rejection was followed to the redraft, a new approval of 15; the approval to the answer.
    expect(output).toContain('"amount": 15');
    expect(output).toMatch(/refund-order returned \(HTTP 200\): .*"amount":15/);
    expect(output).toContain('I have refunded 15.00 EUR for the cracked lid.');
    // The SDK script rejected the full refund and approved the redraft.
    expect(output).toContain('rejecting refund-order of 49.9');
    expect(output).toContain('approving refund-order of 15');
    expect(output).toMatch(/Completed I have refunded 15.00 EUR/);
    // Two refunds of 15 in all (one by the CLI, one by the SDK), none of 49.9: the orders API says so.
    const order = await fetch(`${orders.origin}/orders/A-1001`, { headers: { 'x-api-key': TEAPOT_SHOP_KEY } });
    expect(((await order.json()) as { refunded: number }).refunded).toBe(30);
  }, 180_000);

  it('04-handbook-assistant: a knowledge base, the handbook added and searched, and a run that searches the bound one', async () => {
    const output = await run('04-handbook-assistant.md');
    expect(output).toMatch(/leave\.md: 2 passages/);
    expect(output).toMatch(/equipment\.html: 2 passages/);
    expect(output).toContain('added 2 of 2 files to handbook');
    // The person's search found the passage that answers the question, under its headings.
    expect(output).toMatch(/leave\.md > Leave > Parental leave \(#1, score/);
    // The run's search reached the server's own API with the bound knowledge base, and found that passage.
    expect(output).toMatch(/search-handbook returned \(HTTP 200\): .*16 weeks of paid parental leave/);
    expect(output).toContain('Parents have 16 weeks of paid parental leave');
  }, 180_000);
  it('05-notes-in-a-file-system: three file tools share the bound file system; another file system sees nothing', async () => {
    const output = await run('05-notes-in-a-file-system.md');
    expect(output).toMatch(/list-files returned \(HTTP 200\): .*notes\/boiler\.md/);
    expect(output).toMatch(/read-file returned \(HTTP 200\): .*Serviced in November by Heatwise/);
    expect(output).toMatch(/write-file returned \(HTTP 201\)/);
    expect(output).toContain('# 1 December\nThe boiler was fixed.');
    // The second run, bound to other-team: an empty list, the first file system's note not found.
    expect(output).toMatch(/list-files returned \(HTTP 200\): \{"files":\[\],"nextCursor":null\}/);
    expect(output).toMatch(/read-file failed \(HTTP 404\): .*No file notes\/boiler\.md in file system/);
    // `mt fs-ls other-team --json`, the last pretty-printed array of the output: only the second run's note.
    // (the last: the scripts the tutorial writes with a heredoc are arrays too, printed with their block)
    const otherList = [...output.matchAll(/^\[\n[\s\S]*?^\]$/gm)].at(-1);
    expect(otherList, output).not.toBeNull();
    expect(JSON.parse(otherList?.[0] ?? '[]').map((f: { path: string }) => f.path)).toEqual(['notes/2026-12-01.md']);
  }, 180_000);

  it('06-conversations-and-sub-agents: a conversation of two replies, a child run whose refund is approved through the parent, a result object', async () => {
    const output = await run('06-conversations-and-sub-agents.md');
    // The conversation waited after each reply; the second answered the customer's second message.
    expect(output).toContain('WaitingForInput: Your glass kettle (order A-1001) has been delivered. Anything else?');
    expect(output).toContain('WaitingForInput: You are welcome. Enjoy your tea!');
    // The front desk waited on its child's refund: approval-list showed the call in short, approving it completed both.
    expect(output).toMatch(
      /refund-order .*Pending .*POST http:\/\/127\.0\.0\.1:\d+\/orders\/A-1001\/refund \{"amount":15,/,
    );
    expect(output).toContain('Our billing desk has refunded 15.00 EUR for the cracked lid of your kettle.');
    // The result schema: the run's result is the object.
    expect(output).toContain('{"refundable":true,"amount":15,"reason":"The lid arrived cracked: a partial refund."}');
    // The child's refund reached the orders API once: 30 from tutorial 3, and these 15.
    const order = await fetch(`${orders.origin}/orders/A-1001`, { headers: { 'x-api-key': TEAPOT_SHOP_KEY } });
    expect(((await order.json()) as { refunded: number }).refunded).toBe(45);
  }, 180_000);
});
