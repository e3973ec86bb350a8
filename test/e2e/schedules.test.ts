import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Maitento } from '@maitento/sdk';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from './helpers/api.js';
import { writeRepo } from './helpers/config-repo.js';
import { startServe } from './helpers/processes.js';
import { type RunsStack, startRunsStack } from './helpers/stack.js';
import { runMt } from './support/harness.js';

// Schedules across processes (docs/schedules-and-triggers.md): two `mt serve` and one `mt worker` on one database tick
// a schedule of every second; each tick starts exactly one run, whichever process takes it, also across a SIGKILL; a
// restart after every process was down follows the missed-tick policy ("skip": the ticks nobody was up for are
// recorded as missed; "run-once": one run for them); pause and resume over REST.
let stack: RunsStack;
let client: pg.Client;

const GRACE_MS = 5000;

/** A client of the last server started (the first may be killed). */
const live = () => api(stack.servers.at(-1)!.url, stack.adminKey);

const files = (missed: 'skip' | 'run-once') => [
  { path: 'agents/ticker.mtr', content: 'model = "scripted:tick"\ninstructions = "Say done."\n' },
  {
    path: 'interactions/one-shot/tick.mtr',
    content:
      'agent = { name = "Ticker" agent = @ref("ticker") }\ntask = "Tick %%label%%"\ninputs.prompts = [ { name = "label" required = true } ]\n',
  },
  {
    path: 'schedules/every-second.mtr',
    content: `interaction = @ref("tick")\ninputs = { label = "nightly" }\ncron = "* * * * * *"\noverlap = "allow"\nmissed = "${missed}"\n`,
  },
];

interface TickRow {
  tick: Date;
  version: number;
  status: string;
  detail: string | null;
  run_id: string | null;
  late_ms: number;
}

async function ticks(): Promise<TickRow[]> {
  const { rows } = await client.query<TickRow>(
    "SELECT tick, version, status, detail, run_id, (extract(epoch FROM recorded_at - tick) * 1000)::int AS late_ms FROM mt_schedule_ticks WHERE schedule = 'every-second' ORDER BY tick",
  );
  return rows;
}

async function waitFor<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what} in ${timeoutMs} ms: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Every tick of `rows` is one second after the one before (none lost), and each started tick has its own run. */
async function expectWhole(rows: TickRow[], all: TickRow[] = rows): Promise<void> {
  for (let i = 1; i < rows.length; i++) {
    expect(
      rows[i]!.tick.getTime() - rows[i - 1]!.tick.getTime(),
      `the tick after ${rows[i - 1]!.tick.toISOString()}`,
    ).toBe(1000);
  }
  const started = all.filter((r) => r.status === 'started');
  const ids = started.map((r) => r.run_id);
  expect(new Set(ids).size).toBe(ids.length);
  // In one snapshot (the ticks go on meanwhile): no run of the interaction without its tick's row (a tick's row and
  // its run commit together), and every started tick's run is stored. One run a tick.
  const { rows: runs } = await client.query<{ orphans: string; tick_runs: string }>(
    "SELECT count(*) FILTER (WHERE t.run_id IS NULL) AS orphans, count(*) FILTER (WHERE r.id = ANY($1::uuid[])) AS tick_runs FROM mt_runs r LEFT JOIN mt_schedule_ticks t ON t.run_id = r.id AND t.schedule = 'every-second' WHERE r.interaction = 'tick'",
    [ids],
  );
  expect({ orphans: Number(runs[0]!.orphans), tickRuns: Number(runs[0]!.tick_runs) }).toEqual({
    orphans: 0,
    tickRuns: started.length,
  });
}

beforeAll(async () => {
  stack = await startRunsStack({ servers: 2, workers: 1, deploy: false });
  await mkdir(join(stack.home, 'scripted-models'), { recursive: true });
  await writeFile(join(stack.home, 'scripted-models', 'tick.json'), JSON.stringify([{ text: 'done' }]));
  client = new pg.Client({ connectionString: stack.db!.url });
  await client.connect();
}, 120_000);

afterAll(async () => {
  await client?.end();
  await stack?.close();
});

describe('a schedule of every second on two mt serve and one mt worker', { timeout: 180_000 }, () => {
  it('starts exactly one run a tick, also when a server is killed with SIGKILL', async () => {
    await stack.api.deploy(files('skip'));
    // 30 s of ticks (the figure): one server killed at about a third of them, the rest on the other two.
    await waitFor('10 ticks', ticks, (rows) => rows.length >= 10);
    await stack.servers[0]!.kill();
    const rows = await waitFor('30 ticks', ticks, (r) => r.length >= 30, 40_000);
    await expectWhole(rows);
    // Every process was up at every tick: each one started its run.
    expect(rows.filter((r) => r.status !== 'started')).toEqual([]);
    const ended = await waitFor(
      'the runs to end',
      async () =>
        (await client.query("SELECT status FROM mt_runs WHERE interaction = 'tick' AND status = 'Running'")).rows,
      (running) => running.length <= 3,
    );
    expect(ended.length).toBeLessThanOrEqual(3);
    // The run is an ordinary app run of the interaction's pinned version, with the schedule's inputs.
    const run = await live().getRun(rows[0]!.run_id!);
    expect(run).toMatchObject({
      interaction: { name: 'tick', version: 1 },
      interactive: false,
      inputs: { label: 'nightly' },
    });
    // The run records the schedule and the tick that started it.
    const [started] = await live().events(rows[0]!.run_id!);
    expect(started).toMatchObject({
      type: 'run-started',
      data: { origin: { kind: 'schedule', name: 'every-second', version: 1, tick: rows[0]!.tick.toISOString() } },
    });
  });

  it('lists the schedule with its last and next ticks, and pauses and resumes it', async () => {
    const rest = live();
    const list = await rest.request('GET', '/v1/schedules');
    expect(list.status).toBe(200);
    expect(list.body).toEqual([
      expect.objectContaining({
        name: 'every-second',
        interaction: 'tick',
        cron: '* * * * * *',
        timezone: 'UTC',
        overlap: 'allow',
        missed: 'skip',
        enabled: true,
        paused: false,
        lastTick: expect.any(String),
        nextTick: expect.any(String),
      }),
    ]);
    const unknown = await rest.request('GET', '/v1/schedules/every-secnd');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ code: 'api:schedules:not-found' });
    expect(JSON.stringify(unknown.body)).toContain('every-second');

    const paused = await rest.request('POST', '/v1/schedules/every-second/pause');
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({ paused: true, nextTick: null });
    const atPause = (await ticks()).length;
    await new Promise((r) => setTimeout(r, 3000));
    // A tick under way when the pause committed may still land: at most one.
    expect((await ticks()).length - atPause).toBeLessThanOrEqual(1);
    const pausedCount = (await ticks()).length;
    const resumed = await rest.request('POST', '/v1/schedules/every-second/resume');
    expect(resumed.body).toMatchObject({ paused: false, nextTick: expect.any(String) });
    const rows = await waitFor('ticks after the resume', ticks, (r) => r.length >= pausedCount + 3);
    // The paused seconds are not made up for: a gap, and no missed rows for it.
    const gap = rows.slice(pausedCount - 1, pausedCount + 1);
    expect(gap[1]!.tick.getTime() - gap[0]!.tick.getTime()).toBeGreaterThanOrEqual(2000);
    expect(rows.filter((r) => r.status !== 'started')).toEqual([]);

    const history = await rest.request('GET', '/v1/schedules/every-second/ticks?limit=3');
    expect(history.status).toBe(200);
    expect(history.body).toHaveLength(3);
    expect(history.body[0]).toMatchObject({ status: 'started', version: 1, runId: expect.any(String) });
    expect(Date.parse(history.body[0].tick)).toBeGreaterThan(Date.parse(history.body[1].tick));
  });

  it('lists, pauses, resumes and shows the history with mt schedule-… and the SDK; mt check refuses a bad schedule', async () => {
    const env = { MT_API_URL: stack.servers.at(-1)!.url, MT_API_KEY: stack.adminKey };
    const listed = await runMt(['schedule-list'], { home: stack.home, env });
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/every-second\s+1\s+tick\s+\* \* \* \* \* \*\s+UTC\s+active/);
    const paused = await runMt(['schedule-pause', 'every-second'], { home: stack.home, env });
    expect(paused.stdout.trim()).toBe('every-second paused');
    const mt = new Maitento({ baseUrl: env.MT_API_URL, apiKey: stack.adminKey });
    expect(await mt.schedules.get('every-second')).toMatchObject({ paused: true, nextTick: null });
    const resumed = await mt.schedules.resume('every-second');
    expect(resumed).toMatchObject({ paused: false });
    const history = await runMt(['schedule-history', 'every-second', '--limit', '2', '--json'], {
      home: stack.home,
      env,
    });
    expect(history.code, history.stderr).toBe(0);
    expect(JSON.parse(history.stdout)).toHaveLength(2);
    expect(await mt.schedules.ticks('every-second', { limit: 1 })).toEqual([
      expect.objectContaining({ version: 1, status: expect.any(String) }),
    ]);
    const audit = await mt.request<{ entries: { action: string }[] }>({
      method: 'GET',
      path: '/v1/audit?action=schedule',
    });
    expect(audit.entries.map((e) => e.action)).toEqual(expect.arrayContaining(['schedule.paused', 'schedule.resumed']));

    const bad = files('skip').map((f) =>
      f.path.startsWith('schedules/')
        ? {
            ...f,
            content: f.content
              .replace('"* * * * * *"', '"* * * * 8 * *"')
              .replace('missed = "skip"', 'timezone = "Europe/Pariss"'),
          }
        : f,
    );
    const checked = await runMt(['check', await writeRepo(bad)], { home: stack.home, env: {} });
    expect(checked.code).not.toBe(0);
    expect(checked.stdout + checked.stderr).toContain('mtr:schedule:cron');
    expect(checked.stdout + checked.stderr).toContain('did you mean "Europe/Paris"?');
  });

  it('records the ticks no process was up for as missed (missed "skip"), and starts one run for them (missed "run-once")', async () => {
    for (const missed of ['skip', 'run-once'] as const) {
      if (missed === 'run-once') await live().deploy(files('run-once'));
      const up = (await ticks()).length;
      await waitFor('a tick of this version', ticks, (r) => r.length >= up + 2);
      // Every process down for longer than the grace: the ticks meanwhile are missed.
      await Promise.all([...stack.servers, ...stack.workers].map((p) => p.kill()));
      stack.servers.length = 0;
      stack.workers.length = 0;
      const down = Date.now();
      const last = (await ticks()).at(-1)!.tick.getTime();
      await new Promise((r) => setTimeout(r, GRACE_MS + 4000));
      const restartAt = Date.now();
      const server = await startServe(stack.home, stack.env);
      stack.servers.push(server);
      const rows = await waitFor(
        'ticks after the restart',
        ticks,
        (r) =>
          r.length > 0 &&
          r.at(-1)!.tick.getTime() > Date.now() - 1500 &&
          r.at(-1)!.tick.getTime() > down + GRACE_MS + 3000,
      );
      const after = rows.filter((r) => r.tick.getTime() > last);
      await expectWhole(
        rows.filter((r) => r.tick.getTime() >= last),
        rows,
      );
      // Ticks more than the grace before the restart: no process could take them in time.
      const late = after.filter((r) => r.tick.getTime() < restartAt - GRACE_MS);
      expect(late.length).toBeGreaterThanOrEqual(2);
      const once = after.filter((r) => r.detail?.startsWith('started late'));
      if (missed === 'skip') {
        expect(late.map((r) => r.status)).toEqual(late.map(() => 'missed'));
        expect(once).toEqual([]);
      } else {
        // One run for them all, at the latest of the missed ticks; the ones before it recorded as missed.
        expect(once).toHaveLength(1);
        expect(once[0]).toMatchObject({ status: 'started', version: 2 });
        const before = after.filter((r) => r.tick < once[0]!.tick);
        expect(before.length).toBeGreaterThanOrEqual(1);
        expect(before.map((r) => r.status)).toEqual(before.map(() => 'missed'));
        expect(late.filter((r) => r.status === 'started').length).toBeLessThanOrEqual(1);
      }
    }
  });
});
