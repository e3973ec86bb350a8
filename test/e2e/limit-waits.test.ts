import type { ServerResponse } from 'node:http';
import { Maitento } from '@maitento/sdk';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { api, type RunView } from './helpers/api.js';
import { runsRepoFiles } from './helpers/config-repo.js';
import { useRunsStack } from './helpers/stack.js';
import { defaultUpstreamAnswer, type UpstreamRequest } from './helpers/upstream.js';
import { runMt } from './support/harness.js';

// A run's call over a limit with onLimit "wait" waits durably (docs/limits.md, decision 0340): the run is
// PendingLimit with its wait reason, holds no worker, and goes on when the window opens; limits per key and per end
// user refuse REST and MCP callers with 429 and the IETF RateLimit fields (decision 0341). Three real `mt serve` on
// one database, each with ONE worker slot (MT_WORKER_CONCURRENCY=1): three slots in all.
const stack = useRunsStack({ servers: 3, env: { MT_WORKER_CONCURRENCY: '1' } }, { timeoutMs: 120_000 });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Deploys the runs repo with create-ticket's `limit` (an .mtr object). */
async function deployLimit(limit: string): Promise<void> {
  const files = runsRepoFiles({ origin: stack.upstream.origin }).map((f) =>
    f.path === 'external-operations/open-api/create-ticket.mtr'
      ? { ...f, content: `${f.content}limit = ${limit}\n` }
      : f,
  );
  await stack.api.deploy(files);
}

/** Records when each /tickets call arrives. */
function recordTickets(): number[] {
  const arrivals: number[] = [];
  stack.upstream.setHandler(async (request: UpstreamRequest, res: ServerResponse) => {
    if (request.url.split('?')[0] === '/tickets') arrivals.push(Date.now());
    defaultUpstreamAnswer(request, res);
  });
  return arrivals;
}

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

/** A direct call of create-ticket with `key` on `server`, as any HTTP client makes it. */
function restCall(server: number, key: string): Promise<Response> {
  return fetch(`${stack.servers[server]!.url}/v1/extops/create-ticket/call`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ arguments: { request: { subject: 'By hand' } } }),
  });
}

/** An MCP session on `server` with `key`: a plain tools/call of create-ticket, as any MCP client sends one. */
async function mcpSession(server: number, key: string) {
  const url = `${stack.servers[server]!.url}/mcp`;
  const post = (body: unknown, session?: string, endUser?: string) =>
    fetch(url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...(session === undefined ? {} : { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' }),
        ...(endUser === undefined ? {} : { 'mt-end-user': endUser }),
      },
      body: JSON.stringify(body),
    });
  const init = await post({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'e2e', version: '1' } },
  });
  expect(init.status).toBe(200);
  const session = init.headers.get('mcp-session-id') ?? '';
  await init.body?.cancel();
  expect((await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, session)).status).toBe(202);
  let id = 10;
  return {
    call: (endUser?: string) =>
      post(
        {
          jsonrpc: '2.0',
          id: id++,
          method: 'tools/call',
          params: { name: 'create-ticket', arguments: { request: { subject: 'By MCP' } } },
        },
        session,
        endUser,
      ),
  };
}

/** The console's page of a run, signed in with the admin key as a person would (login form, then its cookie). */
async function consoleRunPage(runId: string): Promise<string> {
  const base = stack.api.url;
  const login = await fetch(`${base}/console/login`);
  const csrfCookie = login.headers.getSetCookie().map((c) => c.split(';')[0]!)[0]!;
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await login.text())![1]!;
  const signedIn = await fetch(`${base}/console/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: csrfCookie, origin: base },
    body: new URLSearchParams({ _csrf: csrf, key: stack.adminKey }).toString(),
  });
  expect(signedIn.status).toBe(303);
  const session = signedIn.headers
    .getSetCookie()
    .map((c) => c.split(';')[0]!)
    .find((c) => c.startsWith('mt_console_session='))!;
  const page = await fetch(`${base}/console/runs/${runId}`, { headers: { cookie: session } });
  expect(page.status).toBe(200);
  return page.text();
}

/** Takes the limit's next call by hand (REST), waiting for the windows of earlier calls to end. */
async function takeTheWindowsCall(): Promise<void> {
  const deadline = Date.now() + 10_000;
  let first = await restCall(0, stack.adminKey);
  while (first.status === 429 && Date.now() < deadline) {
    await sleep(Number(first.headers.get('retry-after')) * 1000);
    first = await restCall(0, stack.adminKey);
  }
  expect(first.status).toBe(200);
}

async function newKey(name: string, role = 'user'): Promise<string> {
  const made = await stack.api.request('POST', '/v1/keys', { name, role });
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  return made.body.key;
}

describe('durable waits for a limit, across three servers', { timeout: 120_000 }, () => {
  it('6 runs against 2 calls per 6 s on 3 worker slots: the extra runs wait PendingLimit with the reason, holding no slot, and complete after the window', async () => {
    await deployLimit('{ calls = 2 per = "6s" }');
    const arrivals = recordTickets();
    const ids = await startRuns(6);
    // More runs wait at once than there are worker slots (3): a waiting run holds none.
    let most = 0;
    let shown: RunView | undefined;
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      const runs = await Promise.all(ids.map((id) => stack.api.getRun(id)));
      const waiting = runs.filter((r) => r.status === 'PendingLimit');
      most = Math.max(most, waiting.length);
      shown ??= waiting[0];
      if (most >= 4 || runs.every((r) => ['Completed', 'Failed', 'Cancelled'].includes(r.status))) break;
      await sleep(100);
    }
    expect(most).toBeGreaterThanOrEqual(4);
    // The wait reason, as the REST run view shows it.
    expect(shown?.waiting).toMatchObject({
      reason: 'rate-limit',
      limit: 'tool-create-ticket',
      description: '2 calls per 6s',
      tool: 'create-ticket',
    });
    const until = Date.parse(shown!.waiting!.until);
    expect(until).toBeGreaterThan(Date.now() - 5000);
    expect(until).toBeLessThan(Date.now() + 7000);

    const runs = await Promise.all(ids.map((id) => stack.api.waitForEnd(id, 60_000)));
    expect(runs.map((r) => r.status)).toEqual(Array(6).fill('Completed'));
    expect(runs.every((r) => JSON.stringify(r.result).includes('T-9'))).toBe(true);
    expect(arrivals).toHaveLength(6);
    const sorted = [...arrivals].sort((a, b) => a - b);
    for (let i = 0; i + 2 < sorted.length; i++) expect(sorted[i + 2]! - sorted[i]!).toBeGreaterThanOrEqual(6000 - 250);
    // The waiting runs go on when the window opens (the sweep's timer is set to their `until`), not a sweep later
    // (SWEEP_MAX_MS, 30 s): each call arrives within 3 s of the moment the call two before it left the window. Each
    // step is bounded on its own: a sum over three steps would add up the runs' own work under a loaded machine (CI
    // once saw 18 s for all six, every step on time).
    for (let i = 2; i < sorted.length; i++) expect(sorted[i]! - sorted[i - 2]!).toBeLessThan(6000 + 3000);
    // A run that waited has the wait and its end in its journal, and its call was sent once.
    const waited = await stack.api.events(shown!.id);
    const types = waited.map((e) => e.type);
    expect(types).toContain('limit-waiting');
    expect(types.indexOf('limit-wait-over')).toBeGreaterThan(types.indexOf('limit-waiting'));
    expect(waited.filter((e) => e.type === 'tool-result')).toHaveLength(1);
  });

  it("the SDK's run() tells onWaiting of the wait, once, and resolves with the completed run", async () => {
    await deployLimit('{ calls = 1 per = "3s" }');
    await takeTheWindowsCall();
    const told: RunView[] = [];
    const mt = new Maitento({ baseUrl: stack.servers[1]!.url, apiKey: stack.adminKey });
    const run = await mt.interactionRuns.run('open-ticket', {
      inputs: { message: 'My lamp arrived broken' },
      onWaiting: (waiting) => {
        told.push(waiting);
      },
    });
    expect(run.status).toBe('Completed');
    expect(told).toHaveLength(1);
    expect(told[0]).toMatchObject({
      status: 'PendingLimit',
      waiting: { reason: 'rate-limit', limit: 'tool-create-ticket' },
    });
  });

  it('a cancel during the wait cancels the run; nothing is sent', async () => {
    await deployLimit('{ calls = 1 per = "1h" }');
    // The hour's one call, taken by hand (the calls of the tests before count until their window ends).
    await takeTheWindowsCall();
    const arrivals = recordTickets();
    const [id] = await startRuns(1);
    const waiting = await stack.api.waitForRun(id!, (r) => r.status === 'PendingLimit', 20_000);
    expect(Date.parse(waiting.waiting!.until)).toBeGreaterThan(Date.now() + 3_000_000);
    // The CLI shows the wait reason; the event stream (SSE) has the wait.
    const status = await runMt(['interaction-status', id!], {
      home: stack.home,
      env: { MT_API_URL: stack.servers[1]!.url, MT_API_KEY: stack.adminKey },
    });
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain('waiting: rate-limit tool-create-ticket until');
    expect(status.stdout).toContain('waits for a rate limit: create-ticket (tool-create-ticket: 1 calls per 1h)');
    const stream = await fetch(`${stack.servers[2]!.url}/v1/runs/${id}/stream`, {
      headers: { authorization: `Bearer ${stack.adminKey}`, accept: 'text/event-stream' },
      signal: AbortSignal.timeout(5000),
    });
    const reader = (stream.body as ReadableStream<Uint8Array>).getReader();
    let sse = '';
    while (!sse.includes('limit-waiting')) {
      const { value, done } = await reader.read();
      if (done) break;
      sse += new TextDecoder().decode(value);
    }
    await reader.cancel();
    expect(sse).toContain('"type":"limit-waiting"');
    // The console's run page says what it waits on.
    const page = await consoleRunPage(id!);
    expect(page).toContain('PendingLimit');
    expect(page).toMatch(/id="run-waiting">\s*the rate limit tool-create-ticket of create-ticket \(1 calls per 1h\)/);
    const cancel = await api(stack.servers[2]!.url, stack.adminKey).request('POST', `/v1/runs/${id}/cancel`);
    expect(cancel.status, JSON.stringify(cancel.body)).toBeLessThan(300);
    const ended = await stack.api.waitForEnd(id!, 10_000);
    expect(ended.status).toBe('Cancelled');
    expect(arrivals).toHaveLength(0);
  });
});

describe('a count that does not answer', { timeout: 60_000 }, () => {
  it("a run's call whose limit's count is locked past the store's deadline waits durably and is made once it answers", async () => {
    await deployLimit('{ calls = 100 per = "1h" }');
    const arrivals = recordTickets();
    // Another session holds the count's lock (as a busy database would keep it) longer than the store's deadline.
    const holder = new pg.Client({ connectionString: stack.db!.url });
    await holder.connect();
    try {
      await holder.query("SELECT pg_advisory_lock(hashtextextended('default/tool:create-ticket', 7357032))");
      const [id] = await startRuns(1);
      const waiting = await stack.api.waitForRun(id!, (r) => r.status === 'PendingLimit', 20_000);
      expect(waiting.waiting?.description).toContain('its count did not answer in time');
      expect(arrivals).toHaveLength(0);
      await holder.query("SELECT pg_advisory_unlock(hashtextextended('default/tool:create-ticket', 7357032))");
      const ended = await stack.api.waitForEnd(id!, 20_000);
      expect(ended.status).toBe('Completed');
      expect(JSON.stringify(ended.result)).toContain('T-9');
      expect(arrivals).toHaveLength(1);
    } finally {
      await holder.end();
    }
  });
});

describe('limits per key and per end user', { timeout: 60_000 }, () => {
  it('REST over its key’s limit gets 429 with Retry-After and the RateLimit fields; another key is counted apart', async () => {
    await deployLimit('{ perKey = { calls = 1 per = "1h" } }');
    // A direct REST call of a tool is an admin's (docs/roles.md).
    const [a, b] = [await newKey('rest-a', 'admin'), await newKey('rest-b', 'admin')];
    expect((await restCall(0, a)).status).toBe(200);
    const over = await restCall(1, a);
    expect(over.status).toBe(429);
    const retryAfter = Number(over.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(3000);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expect(over.headers.get('ratelimit-policy')).toBe('"tool-create-ticket-key";q=1;w=3600');
    expect(over.headers.get('ratelimit')).toBe(`"tool-create-ticket-key";r=0;t=${retryAfter}`);
    const body = (await over.json()) as { code: string };
    expect(body.code).toBe('api:limits:exceeded');
    expect(JSON.stringify(body)).toContain('1 calls per 1h for key');
    expect((await restCall(2, b)).status).toBe(200);
  });

  it('MCP tools/call over its key’s limit gets HTTP 429 with the same fields and a JSON-RPC error', async () => {
    await deployLimit('{ perKey = { calls = 1 per = "1h" } }');
    const key = await newKey('mcp-a');
    const onB = await mcpSession(1, key);
    const ok = await onB.call();
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { result: { isError: boolean } }).result.isError).toBe(false);
    // The same key on another server: counted together.
    const onC = await mcpSession(2, key);
    const over = await onC.call();
    expect(over.status).toBe(429);
    const retryAfter = Number(over.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(3000);
    expect(over.headers.get('ratelimit-policy')).toBe('"tool-create-ticket-key";q=1;w=3600');
    expect(over.headers.get('ratelimit')).toBe(`"tool-create-ticket-key";r=0;t=${retryAfter}`);
    const answer = (await over.json()) as {
      error: { code: number; data: { code: string; retryAfterSeconds: number } };
    };
    expect(answer.error.code).toBe(-32029);
    expect(answer.error.data).toMatchObject({ code: 'api:limits:exceeded', retryAfterSeconds: retryAfter });
  });

  it('a run\'s calls count against the key that started it: with onLimit "fail" the model reads whose limit it is', async () => {
    await deployLimit('{ perKey = { calls = 1 per = "1h" } onLimit = "fail" }');
    const [a, b] = [await newKey('runs-a'), await newKey('runs-b')];
    const start = async (key: string, server: number) => {
      const started = await api(stack.servers[server]!.url, key).startRun('open-ticket', { message: 'Broken lamp' });
      expect(started.status, JSON.stringify(started.body)).toBe(201);
      return stack.api.waitForEnd(started.body.id, 30_000);
    };
    const first = await start(a, 0);
    expect(JSON.stringify(first.result)).toContain('T-9');
    const second = await start(a, 1);
    expect(second.status).toBe('Completed');
    expect(String(second.result)).toContain('its limit of 1 calls per 1h for key');
    const other = await start(b, 2);
    expect(JSON.stringify(other.result)).toContain('T-9');
  });

  it("a run's calls count against its end user's limit, each end user apart", async () => {
    await deployLimit('{ perEndUser = { calls = 1 per = "1h" } onLimit = "fail" }');
    const start = async (endUser: string) => {
      const started = await stack.api.startRun('open-ticket', { message: 'Broken lamp' }, { endUser });
      expect(started.status, JSON.stringify(started.body)).toBe(201);
      return stack.api.waitForEnd(started.body.id, 30_000);
    };
    expect(JSON.stringify((await start('carol')).result)).toContain('T-9');
    expect(String((await start('carol')).result)).toContain('its limit of 1 calls per 1h for end user carol');
    expect(JSON.stringify((await start('dan')).result)).toContain('T-9');
  });

  it('MCP calls per end user: each end user (Mt-End-User) is counted apart', async () => {
    await deployLimit('{ perEndUser = { calls = 1 per = "1h" } }');
    const session = await mcpSession(0, await newKey('mcp-users'));
    expect((await session.call('alice')).status).toBe(200);
    const over = await session.call('alice');
    expect(over.status).toBe(429);
    expect(over.headers.get('ratelimit-policy')).toBe('"tool-create-ticket-end-user";q=1;w=3600');
    expect((await session.call('bob')).status).toBe(200);
    // A call that names no end user is not counted by a per-end-user limit.
    expect((await session.call()).status).toBe(200);
  });
});
