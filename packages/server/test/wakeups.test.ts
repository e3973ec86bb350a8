// What waits wakes on mt_wake, not on its poll: a real listening server whose fallback polls are 10 s, so only a
// wake-up can make a stream, an MCP approval wait or tools/list_changed fast; then the same waiters with the
// wake-up connection stalled behind a TCP proxy, where the fallback polls finish the job and /health says so.
import { startTcpProxy, type TcpProxy } from '@maitento/testkit';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRunStream, type RunsWorld, startRunsWorld, streamEvents } from './runs-helpers.js';

const SLOW = 10_000;
const clients: Client[] = [];

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => undefined);
});

async function mcpClient(world: RunsWorld): Promise<Client> {
  const client = new Client({ name: 'wake-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${world.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${world.adminKey}` } },
    }),
  );
  clients.push(client);
  return client;
}

const refund = (amount: number) => ({
  name: 'refund-order',
  arguments: { request: { amount, reason: 'broken' }, additionalInputs: { 'path.orderId': 'A-7' } },
});

/** The pending approval of the MCP refund of `amount` (outside a run), once it is stored. */
async function pendingApproval(world: RunsWorld, amount: number): Promise<string> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const list = (await world.request('GET', '/v1/approvals')).json() as { id: string; argumentsJson: string }[];
    const found = list.find((a) => JSON.parse(a.argumentsJson).request?.amount === amount);
    if (found) return found.id;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`no pending approval of a refund of ${amount}`);
}

/** Starts a support run that stops at an approval, and opens its stream read up to `run-waiting`. */
async function waitingRunStream(world: RunsWorld) {
  world.script('support', [{ toolCalls: [refund(5)] }, { text: 'Refunded.' }]);
  const started = await world.request('POST', '/v1/interactions/support/runs', { inputs: { message: 'refund' } });
  expect(started.statusCode, started.body).toBe(201);
  const id: string = started.json().id;
  const stream = await openRunStream(world.url, world.adminKey, id);
  await stream.readUntil((frames) => streamEvents(frames).some((f) => f.event === 'run-waiting'));
  return { id, stream };
}

async function timed<T>(work: Promise<T>): Promise<[T, number]> {
  const began = performance.now();
  const value = await work;
  return [value, performance.now() - began];
}

// A waiter woken by mt_wake answers well within this; at its fallback poll it would answer after 10 s. The bound only
// tells the two apart, with room for a loaded 2-core machine (CI saw an MCP call answer its approval in over 300 ms):
// how fast a wake-up is belongs to a benchmark, not to this test.
const WOKEN_MS = 2_000;

describe('waiters wake on mt_wake (fallback polls of 10 s)', () => {
  let world: RunsWorld;

  beforeAll(async () => {
    world = await startRunsWorld({
      listen: true,
      pollMs: SLOW,
      keepAliveMs: 60_000,
      server: { mcp: { approvalPollMs: SLOW, approvalWaitMs: 20_000, listChangedPollMs: SLOW } },
    });
  }, 60_000);

  afterAll(async () => {
    await world?.close();
  });

  it('a run stream sends an event at once when it is stored, not at its next poll', async () => {
    const { id, stream } = await waitingRunStream(world);
    // Cancelling a waiting run stores run-cancelled before the answer.
    expect((await world.request('POST', `/v1/runs/${id}/cancel`)).statusCode).toBe(200);
    const [, ms] = await timed(
      stream.readUntil((frames) => streamEvents(frames).some((f) => f.event === 'run-cancelled'), 5000),
    );
    expect(ms).toBeLessThan(WOKEN_MS);
  });

  it('an MCP tools/call waiting for a person returns at once after the answer, not at its next poll', async () => {
    const client = await mcpClient(world);
    const call = client.callTool(refund(61));
    const approvalId = await pendingApproval(world, 61);
    const answered = await world.request('POST', `/v1/approvals/${approvalId}/approve`);
    expect(answered.statusCode, answered.body).toBe(200);
    const [result, ms] = await timed(call);
    expect(result.isError).toBe(false);
    // The approved refund itself is made in this time too.
    expect(ms).toBeLessThan(WOKEN_MS);
  });

  it('an open MCP session is told tools/list_changed at once after a disable, not at its next poll', async () => {
    const client = await mcpClient(world);
    await client.listTools();
    let told = () => {};
    const changed = new Promise<void>((resolve) => {
      told = resolve;
    });
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => told());
    const tool = (await world.request('GET', '/v1/extops/get-order')).json();
    const path = `/v1/extops/get-order/versions/${tool.version}`;
    expect((await world.request('POST', `${path}/disable`)).statusCode).toBe(200);
    try {
      const [, ms] = await timed(
        Promise.race([
          changed,
          new Promise((_, reject) => setTimeout(() => reject(new Error('no tools/list_changed in 5 s')), 5000)),
        ]),
      );
      expect(ms).toBeLessThan(WOKEN_MS);
    } finally {
      expect((await world.request('POST', `${path}/enable`)).statusCode).toBe(200);
    }
  });
});

describe('the wake-up connection stalled (a TCP proxy that stops forwarding)', () => {
  let world: RunsWorld;
  let proxy: TcpProxy;

  beforeAll(async () => {
    proxy = await startTcpProxy();
    world = await startRunsWorld({
      listen: true,
      pollMs: 1000,
      server: (url) => ({
        // Only the wake-up connection goes through the proxy; the pool and the cache do not.
        wakeOptions: { url: proxy.via(url), pingMs: 200, deadlineMs: 500, retryMs: 200 },
        mcp: { approvalPollMs: 1000, approvalWaitMs: 20_000 },
      }),
    });
  }, 60_000);

  afterAll(async () => {
    await world?.close();
    await proxy?.close();
  });

  const health = async () => {
    const [res, ms] = await timed(world.request('GET', '/health'));
    expect(ms).toBeLessThan(2000);
    return res.json() as { status: string; wakeups: { listening: boolean } };
  };

  async function until(check: () => Promise<boolean>, ms: number): Promise<void> {
    const deadline = Date.now() + ms;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`not true within ${ms} ms`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  it('waiters finish through their fallback poll, /health says wake-ups are not listening, and no request hangs', async () => {
    // (Its cache lease writes on this connection too: on a loaded machine a 500 ms deadline may drop it once at start.)
    await until(async () => (await health()).wakeups.listening, 5000);
    expect(await health()).toMatchObject({ status: 'ok', wakeups: { listening: true } });
    const { id, stream } = await waitingRunStream(world);
    const client = await mcpClient(world);
    const call = client.callTool(refund(62));
    const approvalId = await pendingApproval(world, 62);

    proxy.freeze();
    try {
      await until(async () => !(await health()).wakeups.listening, 3000);
      const [keys, keysMs] = await timed(world.request('GET', '/v1/keys'));
      expect([keys.statusCode, keysMs < 2000]).toEqual([200, true]);

      const [answered, answerMs] = await timed(world.request('POST', `/v1/approvals/${approvalId}/approve`));
      expect([answered.statusCode, answerMs < 2000]).toEqual([200, true]);
      const [result, callMs] = await timed(call);
      expect(result.isError).toBe(false);
      expect(callMs).toBeLessThan(3000);

      const [cancelled, cancelMs] = await timed(world.request('POST', `/v1/runs/${id}/cancel`));
      expect([cancelled.statusCode, cancelMs < 2000]).toEqual([200, true]);
      await stream.readUntil((frames) => streamEvents(frames).some((f) => f.event === 'run-cancelled'), 3000);
      expect((await health()).wakeups.listening).toBe(false);
    } finally {
      proxy.thaw();
    }
    await until(async () => (await health()).wakeups.listening, 5000);
  });
});
