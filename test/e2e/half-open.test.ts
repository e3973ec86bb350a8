import { startTcpProxy, type TcpProxy } from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunsStack } from './helpers/stack.js';
import { startSubAgentsStack } from './helpers/sub-agents-repo.js';

// Issue #41 item 3: a real `mt serve` (the API and its worker) whose every connection to PostgreSQL goes through a
// TCP proxy. Twice, the network stops for 6 s and then comes back half-open: the connections open during the outage
// stay open but silent for good (what a NAT or a failover that forgot them leaves), while new connections work.
// Every statement of the process (the queue's heartbeat, fetch, complete and fail included) has the store's
// deadline, so the dead connections are dropped and replaced, and runs with sub-agents complete; meanwhile /health
// says, within 1 s, that the process cannot reach its database.
let proxy: TcpProxy;
let stack: RunsStack;

beforeAll(async () => {
  proxy = await startTcpProxy();
  stack = await startSubAgentsStack({ databaseUrl: (url) => proxy.via(url) });
}, 90_000);

afterAll(async () => {
  proxy?.thaw();
  await stack?.close();
  await proxy?.close();
});

async function probe(path: string): Promise<{ status: number; body: { status: string; reason?: string }; ms: number }> {
  const began = performance.now();
  const res = await fetch(`${stack.servers[0]!.url}${path}`, { signal: AbortSignal.timeout(10_000) });
  return { status: res.status, body: (await res.json()) as { status: string }, ms: performance.now() - began };
}

/** Readiness, asked as `/health` and as `/health/ready` at once (one answer under two names); liveness beside it. */
async function health(): Promise<{ status: number; body: { status: string; reason?: string }; ms: number }> {
  const [plain, ready, live] = await Promise.all([probe('/health'), probe('/health/ready'), probe('/health/live')]);
  expect([ready.status, ready.body.status]).toEqual([plain.status, plain.body.status]);
  // Liveness stays 200, quickly, whatever the database: a restart would not help an outage.
  expect([live.status, live.body.status]).toEqual([200, 'ok']);
  expect(live.ms).toBeLessThan(1000);
  return { ...ready, ms: Math.max(plain.ms, ready.ms) };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Starts `n` runs of an agent that hands work to two sub-agents; resolves with their ids. A 503 (a statement that
 * met a dead connection, dropped at its deadline) is retried as the SDKs do: nothing of it reached the database.
 */
async function startRuns(n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    let started = await stack.api.startRun('triage-two', { message: `Look both up (${i})` });
    for (let retry = 0; started.status === 503 && retry < 20; retry++) {
      await sleep(250);
      started = await stack.api.startRun('triage-two', { message: `Look both up (${i})` });
    }
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    ids.push(started.body.id);
  }
  return ids;
}

/** Waits until run `id` ended, by `deadline` (a `Date.now()` time); a 503 while connections are replaced is waited out. */
async function ended(id: string, deadline: number): Promise<{ status: string; result: string | null }> {
  let last: unknown;
  while (Date.now() < deadline) {
    const got = await stack.api.request<{ status: string; result: string | null }>('GET', `/v1/runs/${id}`);
    last = got.body;
    if (got.status === 200 && ['Completed', 'Failed', 'Cancelled'].includes(got.body.status)) return got.body;
    await sleep(200);
  }
  throw new Error(`run ${id} had not ended by its deadline: ${JSON.stringify(last)}`);
}

describe('mt serve behind a network that leaves its connections half-open', { timeout: 120_000 }, () => {
  it('completes runs with sub-agents after two outages, and /health (/health/ready) says unready within 1 s while the database is out, /health/live 200', async () => {
    // Every pool's connections opened and in use: runs with sub-agents complete.
    const warmBy = Date.now() + 30_000;
    for (const id of await startRuns(3)) expect((await ended(id, warmBy)).status).toBe('Completed');
    expect((await health()).status).toBe(200);

    for (let outage = 0; outage < 2; outage++) {
      // Runs in flight as the outage begins: their statements hang on connections that never answer again.
      const inFlight = await startRuns(2);
      proxy.freeze();
      const began = Date.now();
      // While nothing reaches the database: unready, with the reason, within 1 s each time.
      await sleep(1000);
      while (Date.now() - began < 6000) {
        const answer = await health();
        expect(answer.ms).toBeLessThan(1000);
        expect([answer.status, answer.body.status]).toEqual([503, 'degraded']);
        expect(answer.body.reason).toMatch(/database/);
        await sleep(500);
      }
      // Back half-open: the connections of the outage stay silent for good, new ones work.
      proxy.blackHoleExisting();
      proxy.thaw();
      // Within the documented recovery time (a held run's job is retried 10 s after its heartbeat stopped, its
      // dead worker's statements each fail at their 1.5 s deadline), every run ends Completed.
      const recoveredBy = Date.now() + 30_000;
      for (const id of [...inFlight, ...(await startRuns(2))]) {
        const run = await ended(id, recoveredBy);
        expect(run.status, JSON.stringify(run)).toBe('Completed');
        expect(run.result).toBe('Both looked up.');
      }
    }

    // Ready again, and quick about it.
    const deadline = Date.now() + 15_000;
    let last = await health();
    while (last.status !== 200 && Date.now() < deadline) {
      await sleep(500);
      last = await health();
    }
    expect([last.status, last.body.status]).toEqual([200, 'ok']);
    expect(last.ms).toBeLessThan(1000);
  });
});
