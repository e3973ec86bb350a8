import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Api } from './helpers/api.js';
import { type ServeProcess, startServe } from './helpers/processes.js';
import { type RunsStack, startRunsStack } from './helpers/stack.js';
import { runMt } from './support/harness.js';

// Chaining triggers (docs/schedules-and-triggers.md, "When another run ends"): real `mt serve` processes on one
// database. A run of refund-desk that completes starts one run of follow-up with its result and inputs mapped; an
// ended run that does not give a required input is refused in the trigger's delivery log, no run; two triggers that
// start each other (ping → pong → ping) stop at the depth limit (MT_RUN_MAX_DEPTH=2 here) with its code in the log;
// a failed run starts the trigger that follows failures, not the one on completions; two chaining servers woken by
// the same 20 ends start one run each; and a server SIGKILLed inside the start of the chained run (its claim waiting on the delivery's row) neither starts
// it nor loses it: the next server starts it exactly once.
let stack: RunsStack;
let client: pg.Client;
/** A second connection, to watch the sessions while `client` holds a row in its transaction. */
let watcher: pg.Client;
/** A server with the chaining loop on (the stack's own has it off, so a delivery owed can be held pending). */
let chaining: ServeProcess;

const files = [
  { path: 'agents/desk.mtr', content: 'model = "scripted:desk"\ninstructions = "Answer."\n' },
  {
    path: 'interactions/one-shot/refund-desk.mtr',
    content:
      'agent = { name = "Desk" agent = @ref("desk") }\ntask = "Refund %%orderId%%"\ninputs.prompts = [ { name = "orderId" required = false } ]\n',
  },
  {
    path: 'interactions/one-shot/follow-up.mtr',
    content:
      'agent = { name = "Desk" agent = @ref("desk") }\ntask = "Follow up on %%orderId%%: %%summary%%"\ninputs.prompts = [\n  { name = "orderId" required = true },\n  { name = "summary" required = true },\n]\n',
  },
  {
    path: 'triggers/after-refund.mtr',
    content:
      'interaction = @ref("follow-up")\non = { runCompleted = @ref("refund-desk") }\ninputs = {\n  orderId = { pointer = "/inputs/orderId" }\n  summary = { pointer = "/result" }\n}\n',
  },
  {
    path: 'interactions/one-shot/ping.mtr',
    content:
      'agent = { name = "Desk" agent = @ref("desk") }\ntask = "Ping %%note%%"\ninputs.prompts = [ { name = "note" required = true } ]\n',
  },
  {
    path: 'interactions/one-shot/pong.mtr',
    content:
      'agent = { name = "Desk" agent = @ref("desk") }\ntask = "Pong %%note%%"\ninputs.prompts = [ { name = "note" required = true } ]\n',
  },
  {
    path: 'triggers/pong-after-ping.mtr',
    content:
      'interaction = @ref("pong")\non = { runCompleted = @ref("ping") status = ["Completed", "Failed"] }\ninputs = { note = { pointer = "/result" } }\n',
  },
  // A run of flaky fails (its agent's script is not JSON): only the trigger that follows failures starts a run.
  { path: 'agents/broken.mtr', content: 'model = "scripted:broken"\ninstructions = "Answer."\n' },
  {
    path: 'interactions/one-shot/flaky.mtr',
    content:
      'agent = { name = "Broken" agent = @ref("broken") }\ntask = "Try %%orderId%%"\ninputs.prompts = [ { name = "orderId" required = true } ]\n',
  },
  {
    path: 'triggers/after-failure.mtr',
    content:
      'interaction = @ref("follow-up")\non = { runCompleted = @ref("flaky") status = ["Failed"] }\ninputs = {\n  orderId = { pointer = "/inputs/orderId" }\n  summary = { pointer = "/error/code" }\n}\n',
  },
  {
    path: 'triggers/after-success.mtr',
    content:
      'interaction = @ref("follow-up")\non = { runCompleted = @ref("flaky") }\ninputs = {\n  orderId = { pointer = "/inputs/orderId" }\n  summary = { pointer = "/result" }\n}\n',
  },
  {
    path: 'triggers/ping-after-pong.mtr',
    content:
      'interaction = @ref("ping")\non = { runCompleted = @ref("pong") }\ninputs = { note = { pointer = "/result" } }\n',
  },
];

async function waitFor<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what} in ${timeoutMs} ms: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The runs a chaining trigger started on the end of run `ended`. */
async function chainedFrom(ended: string): Promise<{ id: string; interaction: string; depth: number }[]> {
  const { rows } = await client.query(
    "SELECT id, interaction, depth FROM mt_runs WHERE origin->>'runId' = $1 ORDER BY created_at",
    [ended],
  );
  return rows;
}

async function deliveries(rest: Api, trigger: string) {
  const log = await rest.request('GET', `/v1/triggers/${trigger}/deliveries`);
  expect(log.status).toBe(200);
  return log.body.deliveries as {
    eventId: string;
    status: string;
    runId: string | null;
    code?: string | null;
    detail: string | null;
    answerStatus: number | null;
  }[];
}

/** Signs in to the console over plain HTTP (its form, with the CSRF cookie) and answers a GET of `path` as text. */
async function consolePage(path: string): Promise<string> {
  const base = stack.servers[0]!.url;
  const cookiesOf = (res: Response) => res.headers.getSetCookie().map((c) => c.split(';')[0]!);
  const login = await fetch(`${base}/console/login`);
  const csrfCookie = cookiesOf(login)[0]!;
  const form = new URLSearchParams({ _csrf: csrfCookie.slice(csrfCookie.indexOf('=') + 1), key: stack.adminKey });
  const signedIn = await fetch(`${base}/console/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: csrfCookie, origin: base },
    body: form.toString(),
    redirect: 'manual',
  });
  expect(signedIn.status).toBe(303);
  const session = cookiesOf(signedIn).find((c) => !c.endsWith('='))!;
  const res = await fetch(`${base}${path}`, { headers: { cookie: session } });
  expect(res.status).toBe(200);
  return res.text();
}

beforeAll(async () => {
  stack = await startRunsStack({
    servers: 1,
    deploy: false,
    env: { MT_TRIGGER_CHAINING: 'off', MT_RUN_MAX_DEPTH: '2' },
  });
  await mkdir(join(stack.home, 'scripted-models'), { recursive: true });
  await writeFile(join(stack.home, 'scripted-models', 'desk.json'), JSON.stringify([{ text: 'Refunded in full.' }]));
  await writeFile(join(stack.home, 'scripted-models', 'broken.json'), 'not a script');
  await stack.api.deploy(files);
  chaining = await startServe(stack.home, { ...stack.env, MT_TRIGGER_CHAINING: 'on' });
  stack.servers.push(chaining);
  client = new pg.Client({ connectionString: stack.db!.url });
  await client.connect();
  watcher = new pg.Client({ connectionString: stack.db!.url });
  await watcher.connect();
}, 120_000);

afterAll(async () => {
  await client?.end();
  await watcher?.end();
  await stack?.close();
});

describe('triggers on another run ending', { timeout: 90_000 }, () => {
  it("starts one run when a run completes, with the ended run's result and inputs, and records what started it", async () => {
    const started = await stack.api.startRun('refund-desk', { orderId: 'A-1042' });
    expect(started.status).toBe(201);
    const a = started.body.id;
    expect((await stack.api.waitForEnd(a)).status).toBe('Completed');
    const [chained] = await waitFor(
      'the chained run',
      () => chainedFrom(a),
      (runs) => runs.length >= 1,
    );
    expect(chained).toMatchObject({ interaction: 'follow-up', depth: 1 });
    const b = await stack.api.getRun(chained!.id);
    expect(b).toMatchObject({
      interaction: { name: 'follow-up', version: 1 },
      interactive: false,
      inputs: { orderId: 'A-1042', summary: 'Refunded in full.' },
      parentRunId: null,
      origin: { kind: 'trigger', name: 'after-refund', version: 1, eventId: a, runId: a, status: 'Completed' },
    });
    const [first] = await stack.api.events(b.id);
    expect(first?.data).toMatchObject({ origin: { kind: 'trigger', name: 'after-refund', runId: a } });
    expect((await stack.api.waitForEnd(b.id)).status).toBe('Completed');
    // One run, whatever more time passes (a second turn of the loop, the other server).
    await new Promise((r) => setTimeout(r, 1500));
    expect(await chainedFrom(a)).toHaveLength(1);
    const [delivery] = await deliveries(stack.api, 'after-refund');
    expect(delivery).toMatchObject({ eventId: a, status: 'started', runId: b.id, answerStatus: null, code: null });
    // `mt interaction-status` names the trigger and the run whose end started it.
    const env = { MT_API_URL: stack.servers[0]!.url, MT_API_KEY: stack.adminKey };
    const shown = await runMt(['interaction-status', b.id], { home: stack.home, env });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain(`trigger after-refund (version 1), when run ${a} ended Completed`);
    // The console's run page names the trigger and links the run whose end started it.
    const html = await consolePage(`/console/runs/${b.id}`);
    expect(html).toContain('href="/console/triggers/after-refund"');
    expect(html).toContain(`href="/console/runs/${a}"`);
  });

  it('refuses a delivery whose ended run does not give a required input, in the delivery log and with no run', async () => {
    const started = await stack.api.startRun('refund-desk', {});
    expect(started.status).toBe(201);
    const a = started.body.id;
    expect((await stack.api.waitForEnd(a)).status).toBe('Completed');
    const refused = await waitFor(
      'the refused delivery',
      async () => (await deliveries(stack.api, 'after-refund')).find((d) => d.eventId === a),
      (d) => d?.status === 'refused',
    );
    expect(refused).toMatchObject({ runId: null, code: 'api:triggers:inputs-refused' });
    expect(refused?.detail).toContain('orderId');
    expect(await chainedFrom(a)).toEqual([]);
    const env = { MT_API_URL: stack.servers[0]!.url, MT_API_KEY: stack.adminKey };
    const shown = await runMt(['trigger-deliveries', 'after-refund'], { home: stack.home, env });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(new RegExp(`${a}\\s+1\\s+refused\\s+-\\s+-`));
    expect(shown.stdout).toContain('[api:triggers:inputs-refused]');
    // The console's trigger page: the runs it follows (no URL), and the refusal with its code.
    const html = await consolePage('/console/triggers/after-refund');
    expect(html).toContain('each run of refund-desk that ends');
    expect(html).not.toContain('id="trigger-url"');
    expect(html).toContain('[api:triggers:inputs-refused]');
  });

  it('stops a cycle of triggers (ping starts pong, pong starts ping) at the depth limit, with its code in the log', async () => {
    const started = await stack.api.startRun('ping', { note: 'serve' });
    expect(started.status).toBe(201);
    const first = started.body.id;
    // ping (depth 0) → pong (1) → ping (2) → pong would be 3, past MT_RUN_MAX_DEPTH=2.
    const [pong] = await waitFor(
      'pong',
      () => chainedFrom(first),
      (runs) => runs.length >= 1,
    );
    expect(pong).toMatchObject({ interaction: 'pong', depth: 1 });
    const [ping] = await waitFor(
      'ping again',
      () => chainedFrom(pong!.id),
      (runs) => runs.length >= 1,
    );
    expect(ping).toMatchObject({ interaction: 'ping', depth: 2 });
    const stopped = await waitFor(
      'the delivery refused at the depth limit',
      async () => (await deliveries(stack.api, 'pong-after-ping')).find((d) => d.eventId === ping!.id),
      (d) => d?.status === 'refused',
    );
    expect(stopped).toMatchObject({ runId: null, code: 'api:triggers:too-deep' });
    expect(stopped?.detail).toMatch(/3 runs deep.*at most 2/);
    expect(await chainedFrom(ping!.id)).toEqual([]);
    const { rows } = await client.query(
      "SELECT interaction, count(*)::int AS n FROM mt_runs WHERE interaction IN ('ping', 'pong') GROUP BY interaction ORDER BY interaction",
    );
    expect(rows).toEqual([
      { interaction: 'ping', n: 2 },
      { interaction: 'pong', n: 1 },
    ]);
  });

  it('follows the ends its status names: a failed run starts the trigger on "Failed", not the one on "Completed"', async () => {
    const started = await stack.api.startRun('flaky', { orderId: 'F-1' });
    expect(started.status).toBe(201);
    const a = started.body.id;
    const ended = await stack.api.waitForEnd(a);
    expect(ended.status).toBe('Failed');
    const [chained] = await waitFor(
      'the run on the failure',
      () => chainedFrom(a),
      (runs) => runs.length >= 1,
    );
    const b = await stack.api.getRun(chained!.id);
    expect(b).toMatchObject({
      interaction: { name: 'follow-up' },
      inputs: { orderId: 'F-1', summary: ended.error!.code },
      origin: { name: 'after-failure', runId: a, status: 'Failed' },
    });
    await new Promise((r) => setTimeout(r, 1000));
    expect(await chainedFrom(a)).toHaveLength(1);
    expect((await deliveries(stack.api, 'after-success')).filter((d) => d.eventId === a)).toEqual([]);
  });

  it('starts one run an end with two servers taking the deliveries at once (20 ends)', async () => {
    const second = await startServe(stack.home, { ...stack.env, MT_TRIGGER_CHAINING: 'on' });
    stack.servers.push(second);
    const ends = await Promise.all(
      Array.from(
        { length: 20 },
        async (_, i) => (await stack.api.startRun('refund-desk', { orderId: `M-${i}` })).body.id,
      ),
    );
    await Promise.all(ends.map((id) => stack.api.waitForEnd(id)));
    const { rows } = await waitFor(
      'a chained run for each end',
      () =>
        client.query<{ ended: string; n: number }>(
          "SELECT origin->>'runId' AS ended, count(*)::int AS n FROM mt_runs WHERE origin->>'runId' = ANY($1::text[]) GROUP BY 1",
          [ends],
        ),
      (r) => r.rows.length === ends.length,
    );
    expect(rows.every((row) => row.n === 1)).toBe(true);
    // Both woken at every end; still one run each, whatever more time passes.
    await new Promise((r) => setTimeout(r, 1500));
    const { rows: again } = await client.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM mt_runs WHERE origin->>'runId' = ANY($1::text[])",
      [ends],
    );
    expect(again[0]?.n).toBe(ends.length);
    const { rows: log } = await client.query<{ status: string; n: number }>(
      "SELECT status, count(*)::int AS n FROM mt_trigger_deliveries WHERE trigger = 'after-refund' AND event_id = ANY($1::text[]) GROUP BY 1",
      [ends],
    );
    expect(log).toEqual([{ status: 'started', n: ends.length }]);
    await second.stop();
    stack.servers.splice(stack.servers.indexOf(second), 1);
  });

  it('starts the chained run exactly once when the server is SIGKILLed between the end and the start', async () => {
    // Only the stack's server (chaining off) from now on: the delivery owed stays pending.
    await chaining.stop();
    stack.servers.splice(stack.servers.indexOf(chaining), 1);
    const started = await stack.api.startRun('refund-desk', { orderId: 'K-9' });
    const a = started.body.id;
    expect((await stack.api.waitForEnd(a)).status).toBe('Completed');
    // The delivery is owed from the statement that ended the run.
    const [owed] = (await deliveries(stack.api, 'after-refund')).filter((d) => d.eventId === a);
    expect(owed).toMatchObject({ status: 'pending', runId: null });

    // The delivery's row held by this test: a chaining server's start of the run waits on it, inside its transaction.
    await client.query('BEGIN');
    await client.query(
      "SELECT 1 FROM mt_trigger_deliveries WHERE trigger = 'after-refund' AND event_id = $1 FOR UPDATE",
      [a],
    );
    const doomed = await startServe(stack.home, { ...stack.env, MT_TRIGGER_CHAINING: 'on' });
    const waiting = async () =>
      (
        await watcher.query(
          "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'UPDATE mt_trigger_deliveries%'",
        )
      ).rows as { pid: number }[];
    const [blocked] = await waitFor('the start waiting on the row', waiting, (rows) => rows.length === 1);
    await doomed.kill();
    await client.query('ROLLBACK');
    // The killed server's transaction is rolled back with its connection: the delivery is still owed, no run.
    await waitFor(
      "the killed server's session to end",
      async () => (await watcher.query('SELECT pid FROM pg_stat_activity WHERE pid = $1', [blocked!.pid])).rows,
      (rows) => rows.length === 0,
    );
    expect(await chainedFrom(a)).toEqual([]);
    expect((await deliveries(stack.api, 'after-refund')).find((d) => d.eventId === a)).toMatchObject({
      status: 'pending',
    });

    // The next server with the loop on starts it, once.
    const next = await startServe(stack.home, { ...stack.env, MT_TRIGGER_CHAINING: 'on' });
    stack.servers.push(next);
    const [chained] = await waitFor(
      'the chained run',
      () => chainedFrom(a),
      (runs) => runs.length >= 1,
    );
    expect((await stack.api.getRun(chained!.id)).inputs).toEqual({ orderId: 'K-9', summary: 'Refunded in full.' });
    await new Promise((r) => setTimeout(r, 1500));
    expect(await chainedFrom(a)).toHaveLength(1);
    expect((await deliveries(stack.api, 'after-refund')).find((d) => d.eventId === a)).toMatchObject({
      status: 'started',
      runId: chained!.id,
    });
  });
});
