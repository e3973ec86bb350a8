import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Writable } from 'node:stream';
import { Maitento } from '@maitento/sdk';
import { createPgliteDb } from '@maitento/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, ROOT, requireBuiltCli } from './support/harness.js';

// `npm start -- --yes` as CI runs it: the real quick start script (server on PGlite, example orders API,
// deploy, the support run through the SDK, approved), in a data folder of the test's own.
const require = createRequire(import.meta.url);
let home: string;
let dataDir: string;

/**
 * A PGlite folder that exists already: creating one (initdb) costs 10–30 s, so the test copies a template
 * made once per machine, as the engine's tests do. The script then starts as on a second `npm start`.
 */
async function pgliteTemplate(): Promise<string> {
  const main = require.resolve('@electric-sql/pglite');
  const version = JSON.parse(readFileSync(join(dirname(main), '..', 'package.json'), 'utf8')).version;
  const template = join(tmpdir(), `mt-pglite-template-${version}`);
  if (!existsSync(join(template, 'PG_VERSION'))) {
    const making = mkdtempSync(join(tmpdir(), 'mt-pglite-making-'));
    await (await createPgliteDb(making)).close();
    try {
      renameSync(making, template);
    } catch {
      rmSync(making, { recursive: true, force: true });
    }
  }
  return template;
}

function runQuickstart(
  args: string[],
  env: Record<string, string>,
  input: string | ((out: string, stdin: Writable) => void) = '',
): Promise<{ code: number | null; out: string }> {
  const child = spawn(process.execPath, [join(ROOT, 'scripts/quickstart.js'), ...args], { cwd: home, env });
  // A string is typed at once and the input ends; a function watches the output with stdin left open (a person
  // who has not answered yet), and may end it.
  if (typeof input === 'string') child.stdin.end(input);
  let out = '';
  child.stdout.on('data', (c: Buffer) => {
    out += c.toString();
    if (typeof input === 'function') input(out, child.stdin);
  });
  child.stderr.on('data', (c: Buffer) => {
    out += c.toString();
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the quick start did not finish in 90 s:\n${out}`));
    }, 90_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

beforeAll(async () => {
  requireBuiltCli();
  home = mkdtempSync(join(tmpdir(), 'mt-quickstart-'));
  dataDir = join(home, 'demo');
  cpSync(await pgliteTemplate(), join(dataDir, 'pglite'), { recursive: true });
});

afterAll(() => {
  rmSync(home, { recursive: true, force: true });
});

describe('npm start (the quick start)', { timeout: 120_000 }, () => {
  it('runs the support interaction with the scripted stand-in, approves the refund, and the orders API makes it once', async () => {
    const { code, out } = await runQuickstart(['--yes', '--data', dataDir], cleanEnv(home));
    expect(out).toContain('a scripted stand-in plays the agent: scripted-models/support-demo.json');
    expect(out).toContain('MT_EGRESS_ALLOW=127.0.0.1/32');
    expect(out).toContain('--yes was given: approving without asking.');
    expect(out).toMatch(/Approve it in the terminal, or at http:\/\/127\.0\.0\.1:\d+\/console\/approvals/);
    expect(out).toMatch(/Run [0-9a-f-]{36}: Completed\./);
    expect(out.match(/POST \/orders\/A-1001\/refund -> 201/g)).toHaveLength(1);
    expect(out).toContain('It made refund R-1: 49.90 EUR on order A-1001.');
    expect(out).not.toContain('R-2');
    expect(code).toBe(0);

    // What the server stored agrees: one run, Completed, and its one approval Approved.
    const db = await createPgliteDb(join(dataDir, 'pglite'));
    try {
      const runs = await db.query<{ status: string }>('SELECT status FROM mt_runs');
      expect(runs.rows.map((r) => r.status)).toEqual(['Completed']);
      const approvals = await db.query<{ status: string; function_name: string }>(
        'SELECT status, function_name FROM mt_approvals',
      );
      expect(approvals.rows).toEqual([{ status: 'Approved', function_name: 'refund-order' }]);
    } finally {
      await db.close();
    }
  });

  it('asks in the terminal: a rejection with a reason makes no refund, the agent redrafts, and the redraft approved is made once', async () => {
    // Answers as typed: something unclear (asked again), n, an empty reason (the suggested one), then y.
    const { code, out } = await runQuickstart(['--data', dataDir], cleanEnv(home), 'maybe\nn\n\ny\n');
    expect(out).toContain('Please type y or n');
    expect(out).toMatch(/Rejected \(Too much for a cracked lid: offer a partial refund/);
    expect(out).toContain('the demo switches');
    expect(out.match(/>>> Approval needed/g)).toHaveLength(2);
    // The second `npm start` deploys again (the orders API has a new port) and reuses the database.
    expect(out).toMatch(/\d+ update/);
    expect(out.match(/POST \/orders\/A-1001\/refund -> 201/g)).toHaveLength(1);
    expect(out).toContain('"amount":15,');
    expect(out).toContain('It made refund R-1: 15.00 EUR on order A-1001.');
    expect(out).not.toContain('49.90 EUR on order');
    expect(out).toMatch(/Run [0-9a-f-]{36}: Completed\./);
    expect(code).toBe(0);
  });

  it('follows the run while the prompt waits: approved through REST, the terminal stops asking and the demo finishes', async () => {
    // issue #45: approved in the console (here its REST route) while the terminal asks; nothing is typed, and
    // stdin stays open as a person's terminal does.
    let approving: Promise<unknown> | undefined;
    const { code, out } = await runQuickstart(['--data', dataDir], cleanEnv(home), (sofar) => {
      if (approving || !sofar.includes('Approve this refund?')) return;
      const url = /Approve it in the terminal, or at (http:\/\/127\.0\.0\.1:\d+)\/console\/approvals/.exec(sofar)?.[1];
      const apiKey = readFileSync(join(dataDir, 'demo-admin.key'), 'utf8').trim();
      const mt = new Maitento({ baseUrl: url as string, apiKey });
      approving = mt.approvals
        .list({ status: 'Pending' })
        .then(([pending]) => mt.approvals.approve((pending as { id: string }).id));
    });
    await approving;
    expect(out.match(/Approve this refund\?/g)).toHaveLength(1);
    expect(out).toMatch(/Answered elsewhere: approved by key [^.]+\. The terminal stops asking; the run goes on\./);
    expect(out).not.toContain('already-answered');
    expect(out).not.toContain('The quick start failed');
    expect(out.match(/POST \/orders\/A-1001\/refund -> 201/g)).toHaveLength(1);
    expect(out).toContain('It made refund R-1: 49.90 EUR on order A-1001.');
    expect(out).toMatch(/Run [0-9a-f-]{36}: Completed\./);
    expect(out).toContain('Next:');
    expect(code).toBe(0);
  });
});
