import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEgressPolicy } from '@maitento/egress';
import { createEngine, modelsFromEnvironment, type RunningEngine } from '@maitento/engine';
import { createGateway } from '@maitento/gateway';
import { pruneBefore } from '@maitento/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Scheduler, startScheduler } from '../src/schedules/scheduler.js';
import { deployOk, startTestServer, type TestServer } from './helpers.js';

// The scheduler with an injected clock (docs/schedules-and-triggers.md): the overlap policies while a tick's run has
// not ended (a conversation's run waits for its next message until it is cancelled), and the ticks of a schedule in Europe/Paris across
// the change to summer time. The server's own scheduler is off; this file's ticks only when told.
let server: TestServer;
let engine: RunningEngine;
let scheduler: Scheduler;
let clock = Date.now() - 60_000;
const gateway = createGateway({ policy: createEgressPolicy({ allow: '127.0.0.1/32' }) });

const schedule = (name: string, body: string) => ({
  path: `schedules/${name}.mtr`,
  content: `interaction = @ref("greet")\ninputs = { who = "${name}" }\n${body}`,
});

beforeAll(async () => {
  server = await startTestServer({ server: { scheduler: false } });
  await deployOk(server, [
    { path: 'agents/greeter.mtr', content: 'model = "scripted:greeter"\ninstructions = "Greet."\n' },
    {
      path: 'interactions/conversation/greet.mtr',
      content:
        'agent = { name = "Greeter" agent = @ref("greeter") }\ntask = "Greet %%who%%"\ninputs.prompts = [ { name = "who" required = true } ]\n',
    },
    schedule('skip', 'cron = "*/10 * * * * *"\n'),
    schedule('queue', 'cron = "*/10 * * * * *"\noverlap = "queue-one"\n'),
    schedule('allow', 'cron = "*/10 * * * * *"\noverlap = "allow"\n'),
    schedule('paris', 'cron = "30 2 * * *"\ntimezone = "Europe/Paris"\noverlap = "allow"\nenabled = false\n'),
  ]);
  const scriptsDir = mkdtempSync(join(tmpdir(), 'mt-scheduler-'));
  writeFileSync(join(scriptsDir, 'greeter.json'), JSON.stringify([{ text: 'Hello.' }]));
  engine = await createEngine({
    db: server.db,
    secretKey: randomBytes(32),
    gateway,
    worker: { concurrency: 4 },
    models: modelsFromEnvironment({ scriptsDir }),
  });
  scheduler = startScheduler({ db: server.db, engine, now: () => new Date(clock), pollMs: 3_600_000 });
  await scheduler.turn();
});

afterAll(async () => {
  await scheduler?.close();
  await engine?.close();
  await gateway.close();
  await server?.close();
});

async function ticks(name: string) {
  const { rows } = await server.db.query<{ tick: Date; status: string; run_id: string | null; detail: string | null }>(
    'SELECT tick, status, run_id, detail FROM mt_schedule_ticks WHERE schedule = $1 ORDER BY tick',
    [name],
  );
  return rows.map((r) => ({ tick: r.tick.toISOString(), status: r.status, run: r.run_id !== null }));
}

describe('the overlap policies', () => {
  it('skips, queues one, or allows a tick while the run of an earlier tick has not ended', async () => {
    // The first whole ten seconds after the deploy, then the two after it.
    const { rows: deployed } = await server.db.query<{ at: Date }>(
      "SELECT created_at AS at FROM mt_resource_versions WHERE kind = 'schedule' AND name = 'skip'",
    );
    const first = Math.floor(deployed[0]!.at.getTime() / 10_000) * 10_000 + 10_000;
    const at = (n: number) => new Date(first + n * 10_000).toISOString();
    for (const n of [0, 1, 2]) {
      clock = first + n * 10_000 + 100;
      await scheduler.turn();
    }
    expect(await ticks('skip')).toEqual([
      { tick: at(0), status: 'started', run: true },
      { tick: at(1), status: 'skipped', run: false },
      { tick: at(2), status: 'skipped', run: false },
    ]);
    expect(await ticks('queue')).toEqual([
      { tick: at(0), status: 'started', run: true },
      { tick: at(1), status: 'queued', run: false },
      { tick: at(2), status: 'skipped', run: false },
    ]);
    expect(await ticks('allow')).toEqual([0, 1, 2].map((n) => ({ tick: at(n), status: 'started', run: true })));

    // The queued tick starts once the run before it ended, and only then.
    const { rows } = await server.db.query<{ run_id: string }>(
      "SELECT run_id FROM mt_schedule_ticks WHERE schedule = 'queue' AND status = 'started'",
    );
    const id = rows[0]!.run_id;
    const deadline = Date.now() + 15_000;
    while ((await engine.getRun('default', id)).status !== 'WaitingForInput' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const cancelled = await engine.cancelRun('default', id);
    expect(cancelled.status).toBe('Cancelled');
    clock += 200;
    await scheduler.turn();
    expect((await ticks('queue'))[1]).toEqual({ tick: at(1), status: 'started', run: true });
  });
});

describe('a schedule in Europe/Paris', () => {
  it('fires at 02:30 local time, at 03:00 on the night the clocks skip 02:30, and at 02:30 again after', async () => {
    await deployOk(server, [
      { path: 'agents/greeter.mtr', content: 'model = "scripted:greeter"\ninstructions = "Greet."\n' },
      {
        path: 'interactions/conversation/greet.mtr',
        content:
          'agent = { name = "Greeter" agent = @ref("greeter") }\ntask = "Greet %%who%%"\ninputs.prompts = [ { name = "who" required = true } ]\n',
      },
      schedule('paris', 'cron = "30 2 * * *"\ntimezone = "Europe/Paris"\noverlap = "allow"\n'),
    ]);
    // 27 March 2027 02:30 CET; 28 March the clocks go from 02:00 to 03:00 (CEST); 29 March 02:30 CEST.
    for (const at of ['2027-03-27T01:30:00.300Z', '2027-03-28T01:00:00.300Z', '2027-03-29T00:30:00.300Z']) {
      clock = Date.parse(at);
      await scheduler.turn();
    }
    const started = (await ticks('paris')).filter((t) => t.status === 'started').map((t) => t.tick);
    expect(started).toEqual(['2027-03-27T01:30:00.000Z', '2027-03-28T01:00:00.000Z', '2027-03-29T00:30:00.000Z']);
    // The days from the deploy to the first of them no process ticked (the clock jumped): missed, not started.
    const missed = (await ticks('paris')).filter((t) => t.status === 'missed');
    expect(missed.length).toBeGreaterThan(90);
    expect(missed.every((t) => t.tick < '2027-03-27')).toBe(true);
  });
});

describe('the retention job', () => {
  it("deletes the ticks recorded before its cutoff, but each schedule's latest (what missed ticks count from) and a queued one", async () => {
    const { rows: latest } = await server.db.query<{ schedule: string; tick: Date }>(
      "SELECT schedule, tick FROM mt_schedule_ticks t WHERE status = 'queued' OR tick = " +
        '(SELECT max(l.tick) FROM mt_schedule_ticks l WHERE l.schedule = t.schedule) ORDER BY schedule, tick',
    );
    const result = await pruneBefore(server.db, new Date(Date.now() + 3_600_000));
    expect(result.scheduleTicks).toBeGreaterThan(100);
    const { rows: kept } = await server.db.query<{ schedule: string; tick: Date }>(
      'SELECT schedule, tick FROM mt_schedule_ticks ORDER BY schedule, tick',
    );
    expect(kept).toEqual(latest);
  });
});
