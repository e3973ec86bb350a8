import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { TEST_SERVER_URL } from '@maitento/testkit';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from './helpers/api.js';
import { startServe } from './helpers/processes.js';
import { ORDERS_SECRET, type RunsStack, startRunsStack } from './helpers/stack.js';
import { cleanEnv, ROOT } from './support/harness.js';

// The restore drill of docs/operations.md ("Backup and restore"): scripts/restore-drill.sh dumps a real Maitento
// database, restores it into a new one and serves it; then a run on the restored database sends a secret stored before
// the backup to the upstream, opened with the same master key. With another key the drill fails, naming why.
let stack: RunsStack;
const targets: string[] = [];

beforeAll(async () => {
  stack = await startRunsStack({ servers: 1 });
}, 90_000);

afterAll(async () => {
  const admin = new pg.Client({ connectionString: TEST_SERVER_URL });
  await admin.connect();
  for (const name of targets) await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await admin.end();
  await stack?.close();
});

function targetUrl(): string {
  const name = `mt_restore_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  targets.push(name);
  const url = new URL(TEST_SERVER_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

function drill(args: string[], env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const child = spawn('bash', [join(ROOT, 'scripts/restore-drill.sh'), ...args], {
    cwd: stack.home,
    env: { ...cleanEnv(stack.home), ...env },
  });
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`restore-drill.sh did not end in 60 s:\n${stderr}`));
    }, 60_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

const orderCalls = (order: string) => stack.upstream.requests.filter((r) => r.url === `/orders/${order}`);

describe('restore drill', { timeout: 120_000 }, () => {
  it('restores a dump into a new database, serves it with the master key, and a run there sends a secret stored before', async () => {
    // Before the backup: runs, one of which read the orders secret (get-order) and was approved.
    const before = await stack.api.startRun('support-desk', {
      message: 'The lamp of order A-1001 arrived broken, please refund it.',
    });
    await stack.api.waitForRun(before.body.id, (r) => r.status === 'PendingApproval');
    expect((await stack.api.request('POST', `/v1/runs/${before.body.id}/approve`, {})).status).toBe(200);
    const ended = await stack.api.waitForEnd(before.body.id);
    expect(ended.status).toBe('Completed');

    const target = targetUrl();
    const result = await drill(['--source', stack.db!.url, '--target', target], {
      MT_SECRET_KEY: stack.env.MT_SECRET_KEY,
      MT_API_KEY: stack.adminKey,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('restore-drill: OK');
    expect(result.stderr).toMatch(/public\.mt_runs=1\b/);
    expect(result.stderr).toMatch(/public\.mt_secrets=1\b/);
    expect(result.stderr).toContain('1 secrets of namespace default readable by name');
    expect(result.stderr).not.toContain(ORDERS_SECRET);

    // The restored database served by a new `mt serve --no-worker` with the same key (as the drill serves it): the
    // old run reads back as it was, and a run started there is queued, executed by no one.
    const apiOnly = await startServe(stack.home, { ...stack.env, DATABASE_URL: target }, ['--no-worker']);
    const calls = orderCalls('B-2002').length;
    let queued: string;
    try {
      const client = api(apiOnly.url, stack.adminKey);
      const old = await client.getRun(before.body.id);
      expect(old).toMatchObject({ status: 'Completed', result: ended.result });
      const run = await client.startRun('support-desk', {
        message: 'The lamp of order B-2002 arrived broken, please refund it.',
      });
      expect(run.status, JSON.stringify(run.body)).toBe(201);
      queued = run.body.id;
      await new Promise((r) => setTimeout(r, 2500));
      expect((await client.getRun(queued)).status).toBe('Running');
      expect(orderCalls('B-2002')).toHaveLength(calls);
    } finally {
      await apiOnly.stop();
    }
    // With a worker, the run goes on: its get-order call sends the secret stored before the backup, opened with the
    // same master key.
    const restored = await startServe(stack.home, { ...stack.env, DATABASE_URL: target });
    try {
      const client = api(restored.url, stack.adminKey);
      await client.waitForRun(queued, (r) => r.status === 'PendingApproval');
      const sent = orderCalls('B-2002');
      expect(sent).toHaveLength(calls + 1);
      expect(Object.values(sent.at(-1)!.headers).join('\n')).toContain(ORDERS_SECRET);
    } finally {
      await restored.stop();
    }
  });

  it('fails, naming the missing key, when the master key given is not the one the secrets are under', async () => {
    const target = targetUrl();
    const result = await drill(['--source', stack.db!.url, '--target', target, '--drop'], {
      MT_SECRET_KEY: randomBytes(32).toString('hex'),
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('api:secrets:key-id-missing');
    expect(result.stderr).toContain('restore-drill: FAILED: mt serve did not start on the restored database');
  });

  it('refuses a target database that exists, and runs without the master key', async () => {
    const exists = await drill(['--source', stack.db!.url, '--target', stack.db!.url], {
      MT_SECRET_KEY: stack.env.MT_SECRET_KEY,
    });
    expect(exists.code).toBe(1);
    expect(exists.stderr).toMatch(/the target database \S+ exists already/);
    const noKey = await drill(['--source', stack.db!.url, '--target', targetUrl()], {});
    expect(noKey.code).toBe(1);
    expect(noKey.stderr).toContain('MT_SECRET_KEY is not set');
  });
});
