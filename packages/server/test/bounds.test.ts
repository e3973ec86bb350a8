import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auth } from './helpers.js';
import { type RunsWorld, startRunsWorld } from './runs-helpers.js';

// One API key cannot exhaust the server (issue 18, defect 6): a run's inputs are limited, lists answer summaries,
// a long transcript is streamed a page at a time, and a key holds only so many streams and MCP sessions open.
let world: RunsWorld;
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;
const eventReads: number[] = [];
const LIMIT_PER_KEY = 3;
const KIB = 1024;
const MIB = 1024 * KIB;

beforeAll(async () => {
  world = await startRunsWorld({
    listen: true,
    server: { runStreamsPerKey: LIMIT_PER_KEY, mcp: { sessionsPerKey: LIMIT_PER_KEY } },
    // The rows each read of run events answered.
    onQuery: (text, rows) => {
      if (/FROM mt_run_events/.test(text)) eventReads.push(rows);
    },
  });
}, 60_000);

afterAll(async () => {
  await world?.close();
});

async function post(path: string, body: unknown, key = world.adminKey): Promise<Response> {
  return fetch(`${world.url}${path}`, {
    method: 'POST',
    headers: { ...auth(key), 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

async function runCount(): Promise<number> {
  const { rows } = await world.db.query<{ n: number }>('SELECT count(*)::int AS n FROM mt_runs');
  return rows[0]!.n;
}

async function userKey(name: string): Promise<string> {
  const res = await world.request('POST', '/v1/keys', { name, role: 'user' });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().key;
}

describe('inputs', () => {
  it('refuses a run whose inputs are 9 MiB with 413 api:runs:input-too-large and stores nothing', async () => {
    const before = await runCount();
    const res = await post('/v1/interactions/support/runs', { inputs: { message: 'x'.repeat(9 * MIB) } });
    const body = await res.json();
    expect([res.status, body.code]).toEqual([413, 'api:runs:input-too-large']);
    expect(body.error).toContain(String(256 * KIB));
    expect(await runCount()).toBe(before);
    const { rows } = await world.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM mt_run_events WHERE length(data::text) > $1',
      [MIB],
    );
    expect(rows[0]!.n).toBe(0);
    // Checked before anything is read: even the interaction (there is none of this name).
    const unknown = await post('/v1/interactions/no-such-interaction/runs', { inputs: { message: 'x'.repeat(MIB) } });
    expect([unknown.status, (await unknown.json()).code]).toEqual([413, 'api:runs:input-too-large']);
  });
});

describe('GET /v1/runs', () => {
  it('lists 12 runs with inputs just under the limit and 1 MiB results in a small answer: RSS and event-loop delay stay bounded', async () => {
    const result = 'r'.repeat(MIB);
    world.script('support', [{ text: result }]);
    // Just under 256 KiB of JSON: {"message":"..."} adds 14 bytes.
    const message = 'm'.repeat(256 * KIB - 64);
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const res = await post('/v1/interactions/support/runs', { inputs: { message } });
      expect(res.status).toBe(201);
      ids.push((await res.json()).id);
    }
    for (const id of ids) expect((await world.waitFor(id)).status).toBe('Completed');

    // Once unmeasured (the route's first use compiles what it needs), then from a collected heap, so what is
    // measured is this request alone.
    await (await fetch(`${world.url}/v1/runs?interaction=support&limit=12`, { headers: auth(world.adminKey) })).text();
    collectGarbage();
    // Server and client share this process: its RSS, sampled through the request (a collection may run before
    // the end), and the longest the event loop was held.
    const delay = monitorEventLoopDelay({ resolution: 5 });
    const rssBefore = process.memoryUsage().rss;
    let rssPeak = rssBefore;
    const sample = setInterval(() => {
      rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
    }, 2);
    delay.enable();
    const res = await fetch(`${world.url}/v1/runs?interaction=support&limit=12`, { headers: auth(world.adminKey) });
    const text = await res.text();
    delay.disable();
    clearInterval(sample);
    const rssGrowth = Math.max(rssPeak, process.memoryUsage().rss) - rssBefore;
    const maxDelayMs = delay.max / 1e6;

    // 12 summaries, a few hundred bytes each; today's main answers 15 MiB (the inputs and whole results), grows
    // RSS by 55-70 MiB and holds the event loop 0.5-1 s here; this answers ~6 KiB, ~0 MiB and ~10 ms.
    expect(res.status).toBe(200);
    expect(Buffer.byteLength(text)).toBeLessThan(16 * KIB);
    expect(rssGrowth, `RSS grew ${rssGrowth} bytes`).toBeLessThan(16 * MIB);
    expect(maxDelayMs, `event loop held ${maxDelayMs} ms`).toBeLessThan(150);
    const page = JSON.parse(text);
    expect(page.runs.map((r: { id: string }) => r.id).sort()).toEqual([...ids].sort());
    for (const run of page.runs) {
      expect(run).not.toHaveProperty('inputs');
      expect(run.result).toBe(result.slice(0, 200));
      expect(run.resultTruncated).toBe(true);
    }

    // The run's own GET still answers everything.
    const one = (await world.request('GET', `/v1/runs/${ids[0]}`)).json();
    expect([one.inputs.message.length, one.result.length]).toEqual([message.length, MIB]);
  }, 120_000);
});

describe('run event streams', () => {
  it('streams a run of 300+ events reading them 100 at a time, every event once and in order', async () => {
    const lookups = Array.from({ length: 150 }, (_, i) => ({
      name: 'get-order',
      arguments: { additionalInputs: { 'path.orderId': `A-${i}` } },
    }));
    world.script('support', [{ toolCalls: lookups }, { text: 'Looked them all up.' }]);
    const res = await post('/v1/interactions/support/runs', { inputs: { message: 'all of them' } });
    const { id } = await res.json();
    expect((await world.waitFor(id)).status).toBe('Completed');

    eventReads.length = 0;
    const stream = await fetch(`${world.url}/v1/runs/${id}/stream`, { headers: auth(world.adminKey) });
    const text = await stream.text();
    const seqs = [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
    // run-started, a model turn, 150 calls (started and result), a model turn, run-completed.
    expect(seqs).toEqual(Array.from({ length: 304 }, (_, i) => i + 1));
    expect(eventReads.length).toBeGreaterThanOrEqual(4);
    expect(Math.max(...eventReads)).toBeLessThanOrEqual(100);

    // The REST list pages too: 100 by default, `limit` up to 1000.
    const first = (await world.request('GET', `/v1/runs/${id}/events`)).json();
    expect(first.map((e: { seq: number }) => e.seq)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    const next = (await world.request('GET', `/v1/runs/${id}/events?after=300&limit=2`)).json();
    expect(next.map((e: { seq: number }) => e.seq)).toEqual([301, 302]);
    const tooMany = await world.request('GET', `/v1/runs/${id}/events?limit=1001`);
    expect([tooMany.statusCode, tooMany.json().code]).toEqual([400, 'api:request:invalid']);
  }, 60_000);

  it('refuses a key its 4th open stream with 429 api:runs:too-many-streams; another key, and a closed stream, free a place', async () => {
    world.gate.close();
    world.script('gated', [{ text: 'Done.' }]);
    const res = await post('/v1/interactions/slow/runs', { inputs: { order: 'A-1' } });
    const { id } = await res.json();
    const open = async (key = world.adminKey) => {
      const controller = new AbortController();
      const response = await fetch(`${world.url}/v1/runs/${id}/stream`, {
        headers: auth(key),
        signal: controller.signal,
      });
      return { response, close: () => controller.abort() };
    };
    const streams = [];
    for (let i = 0; i < LIMIT_PER_KEY; i++) {
      const stream = await open();
      expect(stream.response.status).toBe(200);
      streams.push(stream);
    }
    const refused = await open();
    expect(refused.response.status).toBe(429);
    expect([refused.response.status, (await refused.response.json()).code]).toEqual([429, 'api:runs:too-many-streams']);
    const other = await open(await userKey('streams-other'));
    expect(other.response.status).toBe(200);
    other.close();

    streams.pop()!.close();
    const deadline = Date.now() + 5_000;
    let again = await open();
    while (again.response.status === 429 && Date.now() < deadline) {
      await again.response.body?.cancel();
      await new Promise((resolve) => setTimeout(resolve, 50));
      again = await open();
    }
    expect(again.response.status).toBe(200);
    again.close();
    for (const stream of streams) stream.close();
    world.gate.open();
    await world.waitFor(id);
  }, 30_000);

  it("one count per key across the REST API and the console: 3 REST streams refuse the console's 4th, and back", async () => {
    world.gate.close();
    world.script('gated', [{ text: 'Done.' }]);
    const { id } = await (await post('/v1/interactions/slow/runs', { inputs: { order: 'A-2' } })).json();
    const key = await userKey('streams-both');
    const session = await consoleSession(key);
    const rest = async () => {
      const controller = new AbortController();
      const response = await fetch(`${world.url}/v1/runs/${id}/stream`, {
        headers: auth(key),
        signal: controller.signal,
      });
      return { response, close: () => controller.abort() };
    };
    const live = async () => {
      const controller = new AbortController();
      const response = await fetch(`${world.url}/console/runs/${id}/live`, {
        headers: { cookie: session },
        signal: controller.signal,
      });
      return { response, close: () => controller.abort() };
    };
    // Until `open()` answers 200 (a closed stream's place is given back when the server sees it close).
    const eventually = async (open: () => ReturnType<typeof rest>) => {
      const deadline = Date.now() + 5_000;
      let stream = await open();
      while (stream.response.status === 429 && Date.now() < deadline) {
        await stream.response.body?.cancel();
        await new Promise((resolve) => setTimeout(resolve, 50));
        stream = await open();
      }
      return stream;
    };
    const streams = [];
    for (let i = 0; i < LIMIT_PER_KEY; i++) {
      const stream = await rest();
      expect(stream.response.status).toBe(200);
      streams.push(stream);
    }
    const refusedLive = await live();
    expect(refusedLive.response.status).toBe(429);
    expect(await refusedLive.response.text()).toContain('api:runs:too-many-streams');

    // One REST stream closes: the console takes its place, and then the REST API's next is refused.
    streams.pop()!.close();
    const console = await eventually(live);
    expect(console.response.status).toBe(200);
    streams.push(console);
    const refusedRest = await rest();
    expect([refusedRest.response.status, (await refusedRest.response.json()).code]).toEqual([
      429,
      'api:runs:too-many-streams',
    ]);
    for (const stream of streams) stream.close();
    world.gate.open();
    await world.waitFor(id);
  }, 30_000);
});

/** Signs in to the web console with `key` as a browser does (its CSRF cookie, its Origin); resolves with the cookie. */
async function consoleSession(key: string): Promise<string> {
  const cookieOf = (res: Response) =>
    res.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
  const login = await fetch(`${world.url}/console/login`);
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await login.text())?.[1] ?? '';
  const signedIn = await fetch(`${world.url}/console/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: cookieOf(login), origin: world.url, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: csrf, key }).toString(),
  });
  expect(signedIn.status).toBe(303);
  return cookieOf(signedIn);
}

describe('MCP sessions', () => {
  const initialize = (key: string) =>
    fetch(`${world.url}/mcp`, {
      method: 'POST',
      headers: { ...auth(key), 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bounds', version: '1' } },
      }),
    });

  it('refuses a key its 4th session with 429 api:mcp:too-many-sessions; another key, and an ended session, free a place', async () => {
    const key = await userKey('mcp-sessions');
    const transports: StreamableHTTPClientTransport[] = [];
    for (let i = 0; i < LIMIT_PER_KEY; i++) {
      const transport = new StreamableHTTPClientTransport(new URL(`${world.url}/mcp`), {
        requestInit: { headers: auth(key) },
      });
      await new Client({ name: 'bounds', version: '1' }).connect(transport);
      transports.push(transport);
    }
    const refused = await initialize(key);
    expect(refused.status).toBe(429);
    expect([refused.status, (await refused.json()).code]).toEqual([429, 'api:mcp:too-many-sessions']);
    const other = await initialize(world.adminKey);
    expect(other.status).toBe(200);
    await other.body?.cancel();

    await transports[0]!.terminateSession();
    const again = await initialize(key);
    expect(again.status).toBe(200);
    await again.body?.cancel();
    for (const transport of transports) await transport.close();
  }, 30_000);
});
