import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Maitento, type RunSummary, type RunView } from '@maitento/sdk';
import {
  createTestDatabase,
  refundDeskRepo,
  refundTurn,
  scriptedModels,
  startRecordingUpstream,
  type TestDatabase,
  type Upstream,
  waitFor,
} from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, ROOT, requireBuiltCli, runMt, startServer, tempHome } from '../../../test/e2e/support/harness.js';
import type { ServeProcess } from '../../../test/e2e/helpers/processes.js';

// The real `mt` against a real `mt serve` (its own worker, scripted models, a real upstream on 127.0.0.1):
// every run and approval command once, with its output, its JSON and its exit codes.
const ADMIN_KEY = `mt_cli_runs_${Date.now().toString(36)}_0123456789abcdef`;
const { dir: scriptsDir, script } = scriptedModels('mt-cli-scripts-');
let db: TestDatabase;
let home: string;
let server: ServeProcess;
let upstream: Upstream;
let client: Maitento;
/** The JSON bodies the upstream received: the refunds sent. */
const refunds = (): unknown[] => upstream.requests.map((r) => JSON.parse(r.body));

function mt(args: string[], env: Record<string, string> = {}) {
  return runMt(args, { home, env: { MT_API_URL: server.url, MT_API_KEY: ADMIN_KEY, ...env } });
}

async function mtJson<T>(args: string[]): Promise<T> {
  const result = await mt([...args, '--json']);
  expect(result.code, `mt ${args.join(' ')}: ${result.stderr}`).toBe(0);
  return JSON.parse(result.stdout) as T;
}

const refund = (amount: number) => refundTurn({ amount, note: 'broken' });

/** Polls the run through the SDK until `done(run)`, at most 15 s. */
function waitRun(id: string, done: (run: RunView) => boolean): Promise<RunView> {
  return waitFor(() => client.interactionRuns.get(id), done, {
    timeoutMs: 15_000,
    describe: (run) => `run ${id} is still ${run?.status}`,
  });
}

beforeAll(async () => {
  requireBuiltCli();
  [db, home, upstream] = await Promise.all([
    createTestDatabase('mt_cli_runs', { migrated: true }),
    tempHome(),
    startRecordingUpstream((_request, res) => {
      res.setHeader('content-type', 'application/json');
      res.end('{"refunded":true}');
    }),
  ]);
  server = await startServer(db.url, ADMIN_KEY, home, {
    MT_EGRESS_ALLOW: '127.0.0.1/32',
    MT_SCRIPTED_MODELS: scriptsDir,
  });
  client = new Maitento({ baseUrl: server.url, apiKey: ADMIN_KEY, maxRetries: 0 });
  await client.deploy.create({ files: refundDeskRepo(upstream.origin) });
});

afterAll(async () => {
  await server?.stop();
  await db?.drop();
  await upstream?.close();
  if (home) await rm(home, { recursive: true, force: true });
});

describe('mt interaction-run and the commands that follow a run', { timeout: 60_000 }, () => {
  it('--wait stops at the first wait, shows the call readably with the commands that answer it, and exits 0', async () => {
    script('desk', [refund(40), { text: 'Refunded 40.' }]);
    const result = await mt(['interaction-run', 'desk', '--input', 'message=refund A-1', '--wait']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/started run \S+ of desk version 1/);
    expect(result.stderr).toMatch(/model asks for refund-order/);
    expect(result.stderr).toMatch(/approval requested for refund-order/);
    expect(result.stdout).toContain('waits for a person to approve this call');
    expect(result.stdout).toMatch(/tool: +refund-order/);
    expect(result.stdout).toMatch(/agent: +Desk/);
    expect(result.stdout).toContain('"amount": 40');
    const runId = /mt interaction-approve (\S+)/.exec(result.stdout)?.[1] as string;
    expect(result.stdout).toContain(`mt interaction-reject ${runId} -r "REASON"`);
    expect(refunds()).toEqual([]);

    // Commands that only read run side by side (here and below): each is still its own `mt` process.
    const [status, table] = await Promise.all([
      mtJson<RunView>(['interaction-status', runId]),
      mt(['interaction-status', runId]),
    ]);
    expect(status).toMatchObject({ id: runId, status: 'PendingApproval', result: null, error: null });
    expect(status.pendingApproval?.functionName).toBe('refund-order');
    expect(table.stdout).toMatch(/status +PendingApproval/);

    const approved = await mtJson<RunView>(['interaction-approve', runId]);
    expect(approved.id).toBe(runId);
    const logs = await mt(['interaction-logs', runId, '--follow']);
    expect(logs.code, logs.stderr).toBe(0);
    expect(logs.stdout).toMatch(/approval \S+ approved by bootstrap/);
    expect(logs.stdout).toMatch(/refund-order returned \(HTTP 200\)/);
    expect(logs.stdout).toMatch(/completed: Refunded 40\./);
    expect(refunds()).toEqual([{ amount: 40, note: 'broken' }]);
    const events = await mtJson<{ type: string }[]>(['interaction-logs', runId]);
    expect(events.at(-1)?.type).toBe('run-completed');
  });

  it('--wait --json prints the finished run, and exits 1 for a run that fails', async () => {
    script('desk', [{ text: 'Nothing to refund.' }]);
    const run = await mtJson<RunView>(['interaction-run', 'desk', '--input', 'message=hi', '--wait']);
    expect(run).toMatchObject({
      status: 'Completed',
      result: 'Nothing to refund.',
      pendingApproval: null,
      error: null,
    });
    const failed = await mt(['interaction-run', 'broken', '--wait']);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/run \S+ failed \[api:models:/);
    const plain = await mt(['interaction-run', 'desk', '--input', 'message=hi']);
    expect(plain.code).toBe(0);
    expect(plain.stdout.trim()).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('refuses bad inputs with the server code (exit 1) and malformed options (exit 2)', async () => {
    // Seven commands that are each refused, none changing anything: run side by side.
    const [missing, unknown, ...malformed] = await Promise.all([
      mt(['interaction-run', 'desk', '--json']),
      mt(['interaction-run', 'desk', '--input', 'mesage=x']),
      mt(['interaction-run', 'desk', '--input', 'no-equals']),
      mt(['interaction-run', 'desk', '--input-json', 'message={bad']),
      mt(['interaction-run', 'desk', '--app', '--interactive']),
      mt(['interaction-reject', 'some-run']),
      mt(['run-list', '--status', 'Done']),
    ]);
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stdout).code).toBe('api:interactions:input-required');
    expect([unknown.code, unknown.stderr]).toEqual([1, expect.stringContaining('api:interactions:input-unknown')]);
    expect(malformed.map((r) => r.code)).toEqual([2, 2, 2, 2, 2]);
  });

  it('rejects with a reason, lists and gets approvals, and answers the redraft with approval-approve', async () => {
    script('desk', [refund(90), refund(20), { text: 'Refunded 20.' }]);
    const started = await mt(['interaction-run', 'desk', '--input', 'message=refund A-1', '--app']);
    const appRunId = started.stdout.trim();
    expect((await waitRun(appRunId, (r) => r.status !== 'Running')).status).toBe('Completed');
    expect(await mtJson<unknown[]>(['approval-list', '--run', appRunId, '--status', 'all'])).toEqual([]);

    const runId = (await mt(['interaction-run', 'desk', '--input', 'message=refund A-1'])).stdout.trim();
    const first = (await waitRun(runId, (r) => r.status === 'PendingApproval')).pendingApproval!;
    const [listed, shown] = await Promise.all([mt(['approval-list']), mt(['approval-get', first.id])]);
    expect(listed.stdout).toMatch(new RegExp(`${first.id} +${runId} +refund-order +Desk +Pending`));
    expect(shown.stdout).toContain('"amount": 90');
    const rejected = await mt(['interaction-reject', runId, '-r', 'at most 20', '--approval', first.id]);
    expect(rejected.code, rejected.stderr).toBe(0);
    const second = (await waitRun(runId, (r) => r.status === 'PendingApproval' && r.pendingApproval?.id !== first.id))
      .pendingApproval!;
    const again = await mt(['approval-reject', first.id, '-r', 'twice', '--json']);
    expect([again.code, JSON.parse(again.stdout).code]).toEqual([1, 'api:approvals:already-answered']);
    const approved = await mtJson<{ status: string }>(['approval-approve', second.id]);
    expect(approved.status).toBe('Approved');
    expect((await waitRun(runId, (r) => r.status !== 'Running')).result).toBe('Refunded 20.');
    const answered = await mtJson<{ status: string; reason: string }>(['approval-get', first.id]);
    expect(answered).toMatchObject({ status: 'Rejected', reason: 'at most 20' });
    // The table names who approved (every approver, in order) beside who answered; nobody edited this call.
    const table = (await mt(['approval-get', second.id])).stdout;
    const field = (name: string) => new RegExp(`^${name} +(.*?) *$`, 'm').exec(table)?.[1];
    expect(field('approved by')).toBeTruthy();
    expect(field('approved by')).toBe(field('answered by'));
    expect(field('edited by')).toBe('-');
  });

  it('cancels a waiting run, refuses a second cancel with exit 1, and lists runs by status', async () => {
    script('desk', [refund(5), { text: 'ok' }]);
    const runId = (await mt(['interaction-run', 'desk', '--input', 'message=x'])).stdout.trim();
    await waitRun(runId, (r) => r.status === 'PendingApproval');
    const cancel = await mt(['interaction-cancel', runId]);
    expect(cancel.code, cancel.stderr).toBe(0);
    expect((await waitRun(runId, (r) => r.status !== 'PendingApproval' && r.status !== 'Running')).status).toBe(
      'Cancelled',
    );
    const twice = await mt(['interaction-cancel', runId]);
    expect([twice.code, twice.stderr]).toEqual([1, expect.stringContaining('error [api:runs:already-ended]')]);
    const [page, byAgent, otherAgent, table, none] = await Promise.all([
      mtJson<{ runs: RunSummary[]; nextCursor: string | null }>(['run-list', '--status', 'Cancelled']),
      // --agent: the runs that pinned a version of that agent.
      mtJson<{ runs: RunSummary[] }>(['run-list', '--status', 'Cancelled', '--agent', 'desk']),
      mtJson<{ runs: RunSummary[] }>(['run-list', '--status', 'Cancelled', '--agent', 'broken']),
      mt(['run-list', '--interaction', 'desk', '--limit', '1']),
      mt(['interaction-status', '00000000-0000-4000-8000-000000000000']),
    ]);
    expect(page.runs.map((r) => r.id)).toEqual([runId]);
    expect(byAgent.runs.map((r) => r.id)).toEqual([runId]);
    expect(otherAgent.runs).toEqual([]);
    expect(table.stdout).toMatch(
      new RegExp(`^ID +INTERACTION +STATUS +PARENT +TOKENS +COST +CREATED +UPDATED\\n${runId} +desk@1 +Cancelled +- `),
    );
    expect(table.stderr).toMatch(/more: mt run-list --cursor \S+/);
    expect([none.code, none.stderr]).toEqual([1, expect.stringContaining('api:runs:not-found')]);
  });
});

describe('mt worker', { timeout: 60_000 }, () => {
  it('refuses to start without DATABASE_URL, with a code', async () => {
    const result = await runMt(['worker'], { home, env: {} });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('error [api:cli:worker-needs-database]');
  });

  it('starts against PostgreSQL, says so, and stops cleanly on SIGTERM', async () => {
    const worker = spawn(process.execPath, [join(ROOT, 'packages/cli/bin/mt.js'), 'worker', '--concurrency', '2'], {
      cwd: home,
      env: {
        ...cleanEnv(home),
        DATABASE_URL: db.url,
        MT_SECRET_KEY: randomBytes(32).toString('hex'),
        MT_SCRIPTED_MODELS: scriptsDir,
      },
    });
    let stderr = '';
    worker.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    const exited = new Promise<number | null>((resolve) => worker.on('exit', resolve));
    const deadline = Date.now() + 20_000;
    while (!/worker \S+ executing runs/.test(stderr) && Date.now() < deadline && worker.exitCode === null) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(stderr).toMatch(/worker \S+ executing runs/);
    worker.kill('SIGTERM');
    expect(await exited).toBe(0);
    // Between the two, the worker's own JSON log lines of its shutdown (docs/operations.md, "Shutdown").
    expect(stderr).toMatch(/SIGTERM: stopping\n(\{.*\}\n)*stopped/);
    expect(stderr).toContain('"msg":"shutting down: readiness false, no new runs taken"');
  });
});
