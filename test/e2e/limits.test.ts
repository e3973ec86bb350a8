import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { api } from './helpers/api.js';
import { runsRepoFiles } from './helpers/config-repo.js';
import { useRunsStack } from './helpers/stack.js';
import { defaultUpstreamAnswer, type UpstreamRequest } from './helpers/upstream.js';

// Tools' rate limits and concurrency caps (docs/limits.md) hold across three real `mt serve` processes on one
// database: the upstream (a real server on 127.0.0.1) records when each ticket call arrives and how many are in
// flight at once; the model is testkit's fake OpenAI-compatible server, which calls create-ticket once per run.
const stack = useRunsStack({ servers: 3 }, { timeoutMs: 120_000 });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Deploys the runs repo with create-ticket limited by `limit` (an .mtr object, such as `{ inFlight = 2 }`). */
async function deployLimit(limit: string): Promise<void> {
  const files = runsRepoFiles({ origin: stack.upstream.origin }).map((f) =>
    f.path === 'external-operations/open-api/create-ticket.mtr'
      ? { ...f, content: `${f.content}limit = ${limit}\n` }
      : f,
  );
  await stack.api.deploy(files);
}

/** Deploys the runs repo with the tickets connector's origin limited by `limit`, the tool without a limit. */
async function deployOriginLimit(limit: string): Promise<void> {
  const files = runsRepoFiles({ origin: stack.upstream.origin }).map((f) =>
    f.path === 'connectors/open-api/tickets-create.mtr' ? { ...f, content: `${f.content}limit = ${limit}\n` } : f,
  );
  await stack.api.deploy(files);
}

/** Records each /tickets arrival (ms) and the most in flight at once; answers after `holdMs`. */
function recordTickets(holdMs: number) {
  const arrivals: number[] = [];
  let inFlight = 0;
  let most = 0;
  stack.upstream.setHandler(async (request: UpstreamRequest, res: ServerResponse) => {
    if (request.url.split('?')[0] !== '/tickets') return defaultUpstreamAnswer(request, res);
    arrivals.push(Date.now());
    inFlight += 1;
    most = Math.max(most, inFlight);
    await sleep(holdMs);
    inFlight -= 1;
    defaultUpstreamAnswer(request, res);
  });
  return { arrivals, most: () => most };
}

/** Starts `count` open-ticket runs, spread over the three servers, all at once; resolves with their ids. */
async function startRuns(count: number): Promise<string[]> {
  const started = await Promise.all(
    Array.from({ length: count }, (_, i) =>
      api(stack.servers[i % 3]!.url, stack.adminKey).startRun('open-ticket', { message: 'My lamp arrived broken' }),
    ),
  );
  return started.map((s) => {
    expect(s.status, JSON.stringify(s.body)).toBe(201);
    return s.body.id;
  });
}

describe('tool limits across three servers', { timeout: 120_000 }, () => {
  it('onLimit "wait": 5 runs against 2 calls per 3 s all complete, and no 3 s window holds more than 2 calls', async () => {
    await deployLimit('{ calls = 2 per = "3s" }');
    const seen = recordTickets(0);
    const ids = await startRuns(5);
    const runs = await Promise.all(ids.map((id) => stack.api.waitForEnd(id, 60_000)));
    expect(runs.map((r) => r.status)).toEqual(Array(5).fill('Completed'));
    expect(runs.every((r) => JSON.stringify(r.result).includes('T-9'))).toBe(true);
    expect(seen.arrivals).toHaveLength(5);
    // Admission is exact on the database's clock (store test); an arrival here follows its admission by the time the
    // request takes to be sent, so arrivals N apart may be closer than the window by that jitter (docs/limits.md).
    const sorted = [...seen.arrivals].sort((a, b) => a - b);
    for (let i = 0; i + 2 < sorted.length; i++) expect(sorted[i + 2]! - sorted[i]!).toBeGreaterThanOrEqual(3000 - 250);

    // REST over the limit: 429 with Retry-After and the IETF RateLimit fields, and nothing sent upstream.
    const before = seen.arrivals.length;
    const answers = [];
    for (let i = 0; i < 3; i++) {
      answers.push(
        await api(stack.servers[i]!.url, stack.adminKey).request('POST', '/v1/extops/create-ticket/call', {
          arguments: { request: { subject: 'By hand' } },
        }),
      );
    }
    const refused = answers.filter((a) => a.status === 429);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    expect(answers.length - refused.length).toBe(seen.arrivals.length - before);
    expect(refused[0]!.body).toMatchObject({ code: 'api:limits:exceeded' });
  });

  it('REST over the limit answers the headers', async () => {
    await deployLimit('{ calls = 1 per = "1h" }');
    const call = () =>
      fetch(`${stack.servers[1]!.url}/v1/extops/create-ticket/call`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${stack.adminKey}` },
        body: JSON.stringify({ arguments: { request: { subject: 'By hand' } } }),
      });
    // The calls of the test before count until their 3 s window ends: the hour's one call is made once they left.
    const deadline = Date.now() + 10_000;
    let admitted = await call();
    while (admitted.status === 429 && Date.now() < deadline) {
      await sleep(Number(admitted.headers.get('retry-after')) * 1000);
      admitted = await call();
    }
    expect(admitted.status).toBe(200);
    const answer = await call();
    expect(answer.status).toBe(429);
    const retryAfter = Number(answer.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expect(answer.headers.get('ratelimit-policy')).toBe('"tool-create-ticket";q=1;w=3600');
    expect(answer.headers.get('ratelimit')).toBe(`"tool-create-ticket";r=0;t=${retryAfter}`);
    expect(((await answer.json()) as { code: string }).code).toBe('api:limits:exceeded');
  });

  it('onLimit "fail": the model reads the refusal as the tool result, and the run goes on', async () => {
    await deployLimit('{ calls = 1 per = "1h" onLimit = "fail" }');
    const seen = recordTickets(0);
    const ids = await startRuns(3);
    const runs = await Promise.all(ids.map((id) => stack.api.waitForEnd(id, 60_000)));
    expect(runs.map((r) => r.status)).toEqual(Array(3).fill('Completed'));
    // The hour's one call was taken by the test before: nothing reaches the upstream.
    expect(seen.arrivals).toHaveLength(0);
    for (const run of runs) {
      expect(String(run.result)).toContain('api:limits:exceeded');
      expect(String(run.result)).toContain('create-ticket was not called: its limit of 1 calls per 1h is reached');
    }
  });

  it('a cap of 2 in flight holds under 20 runs on three servers, and every run completes', async () => {
    await deployLimit('{ inFlight = 2 }');
    const seen = recordTickets(150);
    const ids = await startRuns(20);
    const runs = await Promise.all(ids.map((id) => stack.api.waitForEnd(id, 90_000)));
    expect(runs.map((r) => r.status)).toEqual(Array(20).fill('Completed'));
    expect(seen.arrivals).toHaveLength(20);
    expect(seen.most()).toBe(2);
  });

  it("a connector's limit caps its origin: 2 in flight under 50 runs on three servers", async () => {
    await deployOriginLimit('{ inFlight = 2 }');
    const seen = recordTickets(100);
    const ids = await startRuns(50);
    const runs = await Promise.all(ids.map((id) => stack.api.waitForEnd(id, 110_000)));
    expect(runs.map((r) => r.status)).toEqual(Array(50).fill('Completed'));
    expect(seen.arrivals).toHaveLength(50);
    expect(seen.most()).toBe(2);
  });
});
