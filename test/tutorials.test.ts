import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { Maitento } from '@maitento/sdk';
import { createTestDatabase, type TestDatabase, freePort } from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startUpstream, type Upstream } from './e2e/helpers/upstream.js';
import { ROOT, requireBuiltCli, tempHome } from './e2e/support/harness.js';
import { copyProject, packedInstall } from './support/packed.js';
import { allOutput, blocks, filePath, Reader, readTutorial } from './tutorials/tutorial-runner.js';

// The tutorials of docs/tutorials run as a reader would run them (issue #45, test 1): every ```sh block in order,
// in the folder layout they describe: a home of its own with ~/maitento-tutorials, where the packed CLI and SDK
// are installed (once for the file: the skip-test block that packs and installs) and the scripted models' scripts
// are written. The reader's working terminal carries its folder and variables from block to block and from one
// tutorial to the next; a block marked `terminal=NAME` runs in a terminal of its own (the server's, the orders
// API's): a fresh shell, the process it ran before there stopped first (Ctrl-C). Every shell is `bash -l` with HOME
// and the machine's PATH only (its own Node.js first, 20 on this machine, and nothing of the clone), so a terminal
// has only what the tutorial tells the reader to set: Node.js 24 by `source <your clone>/scripts/node.sh`, the
// server's URL and the shared settings in ~/maitento-tutorials/.env, the shops' keys in shop-keys.env. What the
// test changes, and why:
// - `<your clone>` is this clone; `<the printed key>` is the first admin key the server's terminal printed.
// - The server's terminal gets DATABASE_URL (a PostgreSQL test database instead of the embedded one in
//   .maitento/data, as every test of this repository) and the MT_SECRET_KEY PostgreSQL needs.
// - The server listens on a free port instead of 8080 (`--port`, and http://127.0.0.1:8080 becomes its URL), and
//   the orders API on a free port instead of 3000 (PORT, and http://127.0.0.1:3000 becomes its URL): tests run
//   side by side.
// - The calendar service of tutorial 7 (docs/tutorials/code/calendar-provider.ts) listens on a free port instead of
//   4000 (PORT, and http://127.0.0.1:4000 becomes its URL).
// - api.open-meteo.com cannot be reached from CI, so the connector's URL is rewritten to a local upstream on
//   127.0.0.1 that answers like Open-Meteo; ~/maitento-tutorials/.env starts with MT_EGRESS_ALLOW=127.0.0.1 so that
//   tutorial 1 may call it (tutorial 2 adds the same line for its orders API).
// - The agents' `openai:gpt-4o-mini` becomes `scripted:<agent>`, as the tutorials tell a reader without a model
//   key to write, playing the scripts the tutorials write into ~/maitento-tutorials/scripted-models.

let db: TestDatabase;
let home: string;
let tutorials: string;
let state: string;
let upstream: Upstream;
let reader: Reader;
let serverUrl: string;
let ordersUrl: string;
let calendarUrl: string;

/** A port free on 127.0.0.1 right now (the server's and the orders API's, named in the tutorials' commands). */

function rewriteFile(path: string, text: string): string {
  const agent = basename(path, '.mtr');
  return text
    .replaceAll('https://api.open-meteo.com', upstream.origin)
    .replaceAll('http://127.0.0.1:3000', ordersUrl)
    .replaceAll('http://127.0.0.1:8080', serverUrl)
    .replaceAll('http://127.0.0.1:4000', calendarUrl)
    .replace(/^model = "openai:gpt-4o-mini"$/m, `model = "scripted:${agent}"`);
}

/** The first admin key, as the server's terminal printed it. */
function printedKey(r: Reader): string {
  const key = /first admin key \(shown once, keep it\):\n\s+(mt_\S+)/.exec(r.output('server'))?.[1];
  if (key === undefined) throw new Error(`the server printed no first admin key:\n${r.output('server')}`);
  return key;
}

/** The shops' keys tutorial 2 made (in ~/maitento-tutorials/shop-keys.env). */
async function shopKeys(): Promise<{ teapot: string; cup: string }> {
  const text = await readFile(join(tutorials, 'shop-keys.env'), 'utf8');
  const value = (name: string) => new RegExp(`^${name}=(\\S+)$`, 'm').exec(text)?.[1] ?? '';
  return { teapot: value('TEAPOT_SHOP_KEY'), cup: value('CUP_SHOP_KEY') };
}

/** What order A-1001 of the teapot shop says it refunded so far, from the orders API the tutorials started. */
async function refunded(): Promise<number> {
  const order = await fetch(`${ordersUrl}/orders/A-1001`, { headers: { 'x-api-key': (await shopKeys()).teapot } });
  return ((await order.json()) as { refunded: number }).refunded;
}

beforeAll(async () => {
  requireBuiltCli();
  home = await tempHome();
  tutorials = join(home, 'maitento-tutorials');
  state = await mkdtemp(join(tmpdir(), 'mt-tutorials-state-'));
  // The install (npm pack and npm install of the tarballs, made once a suite run and shared with
  // test/installed.test.ts: the longest part of this set-up, mostly waiting on npm), then its project copied into
  // ~/maitento-tutorials, goes on while the database and the upstream start.
  const installed = packedInstall().then((install) => copyProject(install, tutorials));
  // Awaited in the end whatever happens before, so a failed start leaves no npm running into afterAll's rm.
  installed.catch(() => undefined);
  let serverPort: number;
  let ordersPort: number;
  let calendarPort: number;
  try {
    db = await createTestDatabase('mt_tutorials', { migrated: true });
    upstream = await startUpstream();
    serverPort = await freePort();
    ordersPort = await freePort();
    calendarPort = await freePort();
  } finally {
    await installed;
  }
  serverUrl = `http://127.0.0.1:${serverPort}`;
  ordersUrl = `http://127.0.0.1:${ordersPort}`;
  calendarUrl = `http://127.0.0.1:${calendarPort}`;
  // The Open-Meteo stand-in is on 127.0.0.1: allowed from the start (see above).
  await writeFile(join(tutorials, '.env'), 'MT_EGRESS_ALLOW=127.0.0.1\n');
  const secretKey = randomBytes(32).toString('hex');
  // The machine's PATH, nothing of the clone (no node_modules/.bin, no Node.js 24 of scripts/node.sh).
  const path = (process.env.PATH ?? '')
    .split(':')
    .filter((dir) => dir !== '' && !dir.startsWith(ROOT))
    .join(':');
  reader = new Reader({
    home,
    stateDir: state,
    path,
    rewriteFile,
    rewriteCommand: (text, r) =>
      text
        .replaceAll('<your clone>', ROOT)
        .replace(/<the printed key>/g, () => printedKey(r))
        .replace(/npx mt serve\b/g, `npx mt serve --port ${serverPort}`)
        .replace(/\bnode --env-file=(\S+) orders-api\.ts/g, `PORT=${ordersPort} node --env-file=$1 orders-api.ts`)
        .replace(
          /\bnode --env-file=(\S+) calendar-provider\.ts/g,
          `PORT=${calendarPort} node --env-file=$1 calendar-provider.ts`,
        )
        .replaceAll('http://127.0.0.1:8080', serverUrl)
        .replaceAll('http://127.0.0.1:3000', ordersUrl)
        .replaceAll('http://127.0.0.1:4000', calendarUrl),
    terminalEnv: (terminal) =>
      terminal === 'server' ? { DATABASE_URL: db.url, MT_SECRET_KEY: secretKey } : ({} as Record<string, string>),
  });
}, 300_000);

afterAll(async () => {
  await reader?.stopAll();
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
  const results = await reader.read(markdown);
  const output = allOutput(results);
  // MT_E2E_LOGS=1 prints what every block wrote, to read the tutorial's real output.
  if (process.env.MT_E2E_LOGS) console.error(output);
  expect(results.length, output).toBe(commands.length);
  for (const r of results) expect(r.code, output).toBe(0);
  return output;
}

describe("the reader's terminals", () => {
  it('start as fresh shells with the machine PATH: nothing carries from one terminal to another', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mt-tutorials-reader-'));
    const own = new Reader({
      home: dir,
      stateDir: dir,
      path: (process.env.PATH ?? '')
        .split(':')
        .filter((d) => d !== '' && !d.startsWith(ROOT))
        .join(':'),
    });
    try {
      const results = await own.read(
        [
          '```sh',
          'export SET_IN_WORK=1 && mkdir -p here && cd here',
          '```',
          '```sh terminal=other',
          'echo "work=$(printenv SET_IN_WORK || echo unset) node=$(command -v node || echo none)"; echo "listening on nothing"; sleep 30',
          '```',
          '```sh',
          'echo "still=$SET_IN_WORK in=$(basename "$PWD")"',
          '```',
        ].join('\n'),
      );
      const output = allOutput(results);
      expect(
        results.map((r) => r.code),
        output,
      ).toEqual([0, 0, 0]);
      // The other terminal saw nothing the working one set, and the machine's Node.js, none of the clone's.
      expect(output).toMatch(/work=unset node=(?!\S*\.node\/)/);
      expect(output).not.toContain(ROOT);
      // The working terminal kept its own.
      expect(output).toContain('still=1 in=here');
    } finally {
      await own.stopAll();
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

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
    const admin = new Maitento({ baseUrl: serverUrl, apiKey: printedKey(reader), maxRetries: 0 });
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
    const keys = await shopKeys();
    expect(keys.teapot).toMatch(/^[0-9a-f]{32}$/);
    expect(output).not.toContain(keys.teapot);
    expect(output).not.toContain(keys.cup);
  }, 180_000);

  it('03-approvals: the run stops at the refund, a rejection gets a redraft, the approved one is made once, the SDK, two approvers and an edit', async () => {
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
    // Two approvers and an edit: the goodwill refund asked with 20, edited to 10 and approved first by the
    // tutorials' admin key, then by the approver key; made once, with the edited amount.
    expect(output).toMatch(
      /approved goodwill-refund with the edited arguments .*"amount":10.*waiting for more approvers/,
    );
    expect(output).toMatch(/goodwill-refund returned \(HTTP 200\): .*"amount":10/);
    expect(output).toContain('We have made a goodwill refund for the late delivery.');
    expect(output).toMatch(
      /approval [0-9a-f-]+ approved by second-approver \(\S+\), the call edited by .* to .*"amount":10/,
    );
    // The log's call line shows what was sent: the edited arguments, not the model's.
    expect(output).toMatch(/calling goodwill-refund with \{"request":\{"amount":10,/);
    // mt approval-get: the approval answered, with the edited arguments.
    expect(output).toMatch(/status\s+Approved[\s\S]*Arguments:[\s\S]*"amount": 10/);
    // The tutorial restarted the orders API first, so its refunds start from nothing: two refunds of 15 (one by
    // the CLI, one by the SDK), none of 49.9, and the goodwill refund of 10, not 20. The orders API says so.
    expect(await refunded()).toBe(40);
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
    // The tutorial restarted the orders API (none of tutorial 3's refunds is left): the child's refund, once.
    expect(await refunded()).toBe(15);
  }, 180_000);

  it('07-an-agent-that-acts-for-the-signed-in-user: a run waits for its end user to connect, then calls with their token', async () => {
    const output = await run('07-an-agent-that-acts-for-the-signed-in-user.md');
    // Ada's first run waited for her connection, with the calendar service's connect link.
    expect(output).toContain('waits for ada to connect at calendar (not connected)');
    expect(output).toContain(`${calendarUrl}/auth?`);
    // The browser's part came back to Maitento's callback, which stored the connection; the run then made its call.
    expect(output).toMatch(/Maitento answered 200/);
    expect(output).toMatch(/todays-events returned \(HTTP 200\): .*"owner":"ada".*Dentist/);
    expect(output).toMatch(/todays-events returned \(HTTP 200\): .*"owner":"grace".*Compiler review/);
    expect(output).toContain('Here is your day, from your own calendar.');
    expect(output).toMatch(/\bada\s+Active\b/);
    expect(output).toMatch(/\bgrace\s+Active\b/);
    // The calendar API saw each person's own live token: Ada's two runs, Grace's one, nothing refused.
    const calendar = reader.output('calendar');
    expect(calendar.match(/GET \/calendar\/today for ada/g)).toHaveLength(2);
    expect(calendar.match(/GET \/calendar\/today for grace/g)).toHaveLength(1);
    expect(calendar).not.toContain('refused');
    // No access token is printed: the Bearer value is nowhere in what the reader saw.
    expect(output).not.toMatch(/Bearer [A-Za-z0-9_-]{20,}/);
  }, 240_000);

  it('08-runs-that-start-themselves: a schedule ticks runs, a signed webhook starts one run however often it is sent, an end starts its follow-up', async () => {
    const output = await run('08-runs-that-start-themselves.md');
    // The schedule of every ten seconds started runs, each of the triage with the schedule's input.
    expect(output).toMatch(/Z\s+1\s+started\s+[0-9a-f-]{36}/);
    expect(output).toContain('Two tickets need a person today: a double charge and a missing parcel.');
    // Paused, redeployed at 08:00 on weekdays in Paris (version 2), resumed.
    expect(output).toContain('morning-triage paused');
    expect(output).toMatch(/morning-triage resumed: next tick/);
    expect(output).toMatch(/morning-triage\s+2\s+\S+\s+0 8 \* \* MON-FRI\s+Europe\/Paris\s+active/);
    // The shop's delivery started one run; its two replays were answered as the first, with the same run.
    const started = [
      ...output.matchAll(
        /HTTP 202( \(replayed\))? \{"eventId":"evt_1001","status":"started","runId":"([0-9a-f-]{36})"\}/g,
      ),
    ];
    expect(started.map((m) => m[1] !== undefined)).toEqual([false, true, true]);
    expect(new Set(started.map((m) => m[2])).size).toBe(1);
    expect(output).toMatch(/HTTP 401 .*api:hooks:signature-invalid/);
    expect(output).toMatch(/HTTP 422 .*api:hooks:inputs-refused/);
    // The delivery log: one started, one refused, the forged one counted; the run answered.
    expect(output).toMatch(/evt_1001\s+1\s+started\s+202/);
    expect(output).toMatch(/evt_1003\s+1\s+refused\s+422/);
    expect(output).toContain('rejected: signature 1');
    expect(output).toContain('I will check the order and refund it if the reason holds.');
    // The refund desk's end started one follow-up with its answer, which names the trigger and the ended run.
    expect(output).toMatch(/\s1\s+started\s+-\s+[0-9a-f-]{36}/);
    expect(output).toMatch(/trigger refund-follow-up \(version 1\), when run [0-9a-f-]{36} ended Completed/);
    expect(output).toContain('Dear customer, we are checking your order and will refund it if the reason holds.');
    // Nothing of the shop's secret is printed.
    const secret = /SHOP_WEBHOOK_SECRET=(\S+)/.exec(await readFile(join(tutorials, 'shop-webhook.env'), 'utf8'))?.[1];
    expect(secret).toMatch(/^whsec_[0-9a-f]{48}$/);
    expect(output).not.toContain(secret);
  }, 180_000);
});
