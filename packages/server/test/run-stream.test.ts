import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auth } from './helpers.js';
import { openRunStream, type RunsWorld, startRunsWorld, streamEvents } from './runs-helpers.js';

// The live event stream of a run over a real listening server: the SSE format, following a run as it
// goes, resuming with Last-Event-ID, keep-alives, and stopping when the client or the server goes away.
let world: RunsWorld;
let closed = false;

/** Opens the stream of `runId` with the admin key and reads frames until `until` says stop (or the stream ends). */
const openStream = (runId: string, headers: Record<string, string> = {}, query = '') =>
  openRunStream(world.url, world.adminKey, runId, headers, query);

const events = streamEvents;

async function startSlow(): Promise<string> {
  const res = await world.request('POST', '/v1/interactions/slow/runs', { inputs: { order: 'A-1' } });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id;
}

beforeAll(async () => {
  world = await startRunsWorld({ listen: true, pollMs: 50, keepAliveMs: 300 });
  world.script('gated', [{ text: 'All good.' }]);
});

afterAll(async () => {
  if (!closed) await world?.close();
});

describe('GET /v1/runs/:id/stream', () => {
  it('sends every event of an ended run as id/event/data frames, then closes', async () => {
    world.gate.open();
    const id = await startSlow();
    await world.waitFor(id);
    const stream = await openStream(id);
    expect(stream.res.status).toBe(200);
    expect(stream.res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const frames = events(await stream.readToEnd());
    expect(stream.ended).toBe(true);
    expect(frames.map((f) => f.event)).toEqual(['run-started', 'model-response', 'run-completed']);
    expect(frames.map((f) => f.id)).toEqual(['1', '2', '3']);
    const last = JSON.parse(frames[2].data as string);
    expect(last).toMatchObject({
      seq: 3,
      type: 'run-completed',
      at: expect.any(String),
      data: { result: 'All good.' },
    });
  });

  it('follows a run live, and a client resuming with Last-Event-ID gets only the events after it', async () => {
    world.gate.close();
    const id = await startSlow();
    const first = await openStream(id);
    await first.readUntil((frames) => events(frames).length >= 1);
    expect(events(first.frames).map((f) => f.event)).toEqual(['run-started']);
    first.abort();

    world.gate.open();
    await world.waitFor(id);
    const resumed = await openStream(id, { 'last-event-id': '1' }, '?after=0');
    const frames = events(await resumed.readToEnd());
    expect(frames.map((f) => [f.id, f.event])).toEqual([
      ['2', 'model-response'],
      ['3', 'run-completed'],
    ]);
    const byQuery = events(await (await openStream(id, {}, '?after=2')).readToEnd());
    expect(byQuery.map((f) => f.id)).toEqual(['3']);
  });

  it('sends new events as they are stored, and keep-alive comments while nothing happens', async () => {
    world.gate.close();
    const id = await startSlow();
    const stream = await openStream(id);
    await stream.readUntil((frames) => frames.some((f) => f.comment === 'keep-alive'));
    expect(events(stream.frames).map((f) => f.event)).toEqual(['run-started']);
    world.gate.open();
    const frames = events(await stream.readToEnd());
    expect(frames.map((f) => f.event)).toEqual(['run-started', 'model-response', 'run-completed']);
  });

  it('stops asking for events as soon as the client goes away', async () => {
    world.gate.close();
    const id = await startSlow();
    const stream = await openStream(id);
    await stream.readUntil((frames) => events(frames).length >= 1);
    stream.abort();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const after = world.listEventsCalls();
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(world.listEventsCalls()).toBe(after);
    world.gate.open();
    await world.waitFor(id);
  });

  it('carries approval-requested and approval-answered as frames: event name, id = seq, data = the stored event', async () => {
    world.script('support', [
      {
        toolCalls: [
          {
            name: 'refund-order',
            arguments: { request: { amount: 40, reason: 'broken' }, additionalInputs: { 'path.orderId': 'A-1' } },
          },
        ],
      },
      { text: 'Refunded.' },
    ]);
    const started = await world.request('POST', '/v1/interactions/support/runs', { inputs: { message: 'refund A-1' } });
    expect(started.statusCode, started.body).toBe(201);
    const id = started.json().id;
    const stream = await openStream(id);
    await stream.readUntil((frames) => events(frames).some((f) => f.event === 'run-waiting'));
    const requested = events(stream.frames).find((f) => f.event === 'approval-requested');
    expect(requested).toBeDefined();
    const requestedData = JSON.parse(requested!.data as string);
    expect(requested!.id).toBe(String(requestedData.seq));
    expect(requestedData).toMatchObject({
      type: 'approval-requested',
      at: expect.any(String),
      data: {
        toolCallId: expect.any(String),
        approval: { functionName: 'refund-order', status: 'Pending', runId: id, agentName: 'Support' },
      },
    });
    const approvalId = requestedData.data.approval.id;

    const approved = await world.request('POST', `/v1/runs/${id}/approve`, { approvalId });
    expect(approved.statusCode, approved.body).toBe(200);
    const frames = events(await stream.readToEnd());
    const answered = frames.find((f) => f.event === 'approval-answered');
    expect(answered).toBeDefined();
    const answeredData = JSON.parse(answered!.data as string);
    expect(answered!.id).toBe(String(answeredData.seq));
    expect(answeredData).toMatchObject({
      type: 'approval-answered',
      data: {
        approvalId,
        toolCallId: requestedData.data.toolCallId,
        decision: 'approve',
        reason: null,
        by: { keyId: expect.any(String), keyName: 'bootstrap' },
        at: expect.any(String),
      },
    });
    // In the order they were stored, each once, the stream ending with the run.
    const stored = (await world.request('GET', `/v1/runs/${id}/events`)).json();
    expect(frames.map((f) => [f.id, f.event])).toEqual(
      stored.map((e: { seq: number; type: string }) => [String(e.seq), e.type]),
    );
    expect(frames.map((f) => JSON.parse(f.data as string))).toEqual(stored);
    expect(frames.at(-1)?.event).toBe('run-completed');
  });

  it('answers 404 as JSON for an unknown run, and 401 without a key', async () => {
    const res = await fetch(`${world.url}/v1/runs/00000000-0000-4000-8000-000000000000/stream`, {
      headers: auth(world.adminKey),
    });
    expect(res.status).toBe(404);
    expect((await res.json()).code).toBe('api:runs:not-found');
    expect((await fetch(`${world.url}/v1/runs/x/stream`)).status).toBe(401);
  });

  it('ends open streams when the server closes, instead of waiting for their runs', async () => {
    world.gate.close();
    const id = await startSlow();
    const stream = await openStream(id);
    await stream.readUntil((frames) => events(frames).length >= 1);
    const started = Date.now();
    const closing = world.close();
    closed = true;
    await stream.readToEnd();
    expect(stream.ended).toBe(true);
    await closing;
    expect(Date.now() - started).toBeLessThan(8_000);
  });
});

describe('GET /v1/runs/:id/stream: the run watched while it streams', () => {
  // A world whose streams neither poll nor keep alive for a minute: only a wake-up `run:<id>` makes them read again
  // within the test, and a run's appends wake it only while a stream marks the run watched (decision 0365).
  let quiet: RunsWorld;
  beforeAll(async () => {
    quiet = await startRunsWorld({ listen: true, pollMs: 60_000, keepAliveMs: 60_000 });
    quiet.script('gated', [{ text: 'All good.' }]);
  });
  afterAll(async () => {
    await quiet?.close();
  });

  it('marks its run watched before reading, so each event appended while it is open wakes it at once', async () => {
    quiet.gate.close();
    const res = await quiet.request('POST', '/v1/interactions/slow/runs', { inputs: { order: 'A-1' } });
    expect(res.statusCode, res.body).toBe(201);
    const id: string = res.json().id;
    const watched = async () =>
      (
        await quiet.db.query<{ watched: boolean }>(
          "SELECT coalesce(watched_until > now() + interval '20 seconds', false) AS watched FROM mt_runs WHERE id = $1",
          [id],
        )
      ).rows[0]?.watched;
    // Not watched before a stream opens: its first append (run-started) woke nobody.
    expect(await watched()).toBe(false);
    const stream = await openRunStream(quiet.url, quiet.adminKey, id);
    await stream.readUntil((frames) => events(frames).length >= 1);
    expect(await watched()).toBe(true);
    const opened = Date.now();
    quiet.gate.open();
    const frames = events(await stream.readToEnd(10_000));
    expect(frames.map((f) => f.event)).toEqual(['run-started', 'model-response', 'run-completed']);
    // Well before its renewal (20 s) or its keep-alive (60 s) would have made it read.
    expect(Date.now() - opened).toBeLessThan(5_000);
  });
});
