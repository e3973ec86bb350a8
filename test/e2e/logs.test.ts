import { type ChildProcess, spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunsStack, startRunsStack } from './helpers/stack.js';
import { join } from 'node:path';
import { cleanEnv, ROOT } from './support/harness.js';

// The logs of `mt serve` and `mt worker` (docs/operations.md, "Logs"): on stderr, one pino JSON object a line, the
// same shape in both (level, time, pid, hostname, msg); the only other lines are the few status lines written for a
// person (ready, stopping, stopped). A request's id is the caller's X-Request-Id (else a UUID), echoed back and on its
// lines; a line about a run names it.
let stack: RunsStack;
let worker: { child: ChildProcess; stdout: string; stderr: string } | undefined;
/** The status lines of `mt serve` and `mt worker`, for a person: nothing else on stderr is not JSON. */
const STATUS_LINES = [
  /^listening on http:\/\/\S+ \(data: .+\)$/,
  /^web console: http:\/\/\S+\/console \(approvals at \S+\)$/,
  /^worker \S+ executing runs \(data: .+\)$/,
  /^SIG[A-Z]+: stopping$/,
  /^stopped$/,
];
const MT = join(ROOT, 'packages/cli/bin/mt.js');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

beforeAll(async () => {
  stack = await startRunsStack({ servers: 1, env: { MT_LOG_LEVEL: 'debug' } });
}, 90_000);

afterAll(async () => {
  if (worker && worker.child.exitCode === null) {
    const exited = new Promise((r) => worker!.child.once('exit', r));
    worker.child.kill('SIGTERM');
    await exited;
  }
  await stack?.close();
});

/** Starts `mt worker` with stdout and stderr kept apart, until its ready line on stderr. */
async function startLoggedWorker(): Promise<NonNullable<typeof worker>> {
  const child = spawn(process.execPath, [MT, 'worker'], {
    cwd: stack.home,
    env: { ...cleanEnv(stack.home), ...stack.env, MT_LOG_LEVEL: 'debug', MT_METRICS_PORT: '0' },
  });
  const started = { child, stdout: '', stderr: '' };
  child.stdout?.on('data', (c: Buffer) => {
    started.stdout += c.toString();
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`mt worker did not start:\n${started.stderr}`)), 60_000);
    child.stderr?.on('data', (c: Buffer) => {
      started.stderr += c.toString();
      if (started.stderr.includes('executing runs')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`mt worker exited with ${code}:\n${started.stderr}`)));
  });
  return started;
}

/**
 * Every line of `text` is one JSON object with pino's fields and this `pid`, or one of the status lines; resolves with
 * the parsed JSON lines.
 */
function expectLogLines(text: string, pid: number | undefined): Record<string, unknown>[] {
  const parsed: Record<string, unknown>[] = [];
  for (const line of text.split('\n').filter((l) => l !== '')) {
    if (!line.startsWith('{')) {
      expect(
        STATUS_LINES.some((status) => status.test(line)),
        `a plain-text line that is no status line: ${line}`,
      ).toBe(true);
      continue;
    }
    const entry = JSON.parse(line) as Record<string, unknown>;
    expect(typeof entry.level, line).toBe('number');
    expect(typeof entry.time, line).toBe('number');
    expect(entry.pid, line).toBe(pid);
    expect(typeof entry.hostname, line).toBe('string');
    expect(typeof entry.msg, line).toBe('string');
    parsed.push(entry);
  }
  return parsed;
}

describe('logs', { timeout: 60_000 }, () => {
  it('honours an incoming X-Request-Id, echoes it, and puts it and the run id on the request line', async () => {
    const started = await stack.api.startRun('weather', { place: 'London' });
    expect((await stack.api.waitForEnd(started.body.id)).status).toBe('Completed');
    const get = (headers: Record<string, string>) =>
      fetch(`${stack.api.url}/v1/runs/${started.body.id}`, {
        headers: { authorization: `Bearer ${stack.adminKey}`, ...headers },
      });

    const given = await get({ 'x-request-id': 'lb-7f3a9c21.req:42' });
    expect(given.status).toBe(200);
    expect(given.headers.get('x-request-id')).toBe('lb-7f3a9c21.req:42');

    // Without one, or with one that is not an id (too long, spaces), the server makes a UUID: unique, not a counter.
    const [none, other, bad] = await Promise.all([get({}), get({}), get({ 'x-request-id': 'a b' })]);
    const ids = [none, other, bad].map((r) => r.headers.get('x-request-id') ?? '');
    for (const id of ids) expect(id).toMatch(UUID);
    expect(new Set(ids).size).toBe(3);
    const long = await get({ 'x-request-id': 'x'.repeat(129) });
    expect(long.headers.get('x-request-id')).toMatch(UUID);

    // The request's line (debug level here) carries both ids.
    const server = stack.servers[0];
    let lines: Record<string, unknown>[] = [];
    for (let i = 0; i < 50; i++) {
      lines = server
        .log()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l));
      if (lines.some((l) => l.reqId === 'lb-7f3a9c21.req:42')) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const line = lines.find((l) => l.reqId === 'lb-7f3a9c21.req:42');
    expect(line).toMatchObject({ route: '/v1/runs/:id', runId: started.body.id, statusCode: 200 });
    // Every line of mt serve (its stdout and stderr) is a pino JSON line or a status line.
    expect(expectLogLines(server.log(), server.pid).length).toBeGreaterThan(3);
  });

  it('mt worker writes JSON log lines of mt serve’s shape (time, pid, hostname) and no other plain text', async () => {
    worker = await startLoggedWorker();
    // A run the worker may take, and its metrics line (info) at start.
    const started = await stack.api.startRun('weather', { place: 'Paris' });
    expect((await stack.api.waitForEnd(started.body.id)).status).toBe('Completed');
    await new Promise((r) => setTimeout(r, 200));
    const exited = new Promise((r) => worker!.child.once('exit', r));
    worker.child.kill('SIGTERM');
    await exited;
    expect(worker.stdout).toBe('');
    const entries = expectLogLines(worker.stderr, worker.child.pid);
    expect(entries.some((e) => typeof e.msg === 'string' && e.msg.startsWith('metrics at'))).toBe(true);
    expect(worker.stderr).toMatch(/^stopped$/m);
  });
});
