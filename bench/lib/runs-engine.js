// bench:runs' engine harness, one process per round and version: the version's engine (bench/lib/runs-version.js) on
// a fresh database with a worker in this process, runs started with `startRun` (→ the `mt-run` queue → the worker →
// the AI SDK's OpenAI provider against the fake model, the gateway against the upstream: bench/lib/runs-servers.js).
// BENCH_CONFIG: `{ root, ports, runs, sequential, concurrency, warmup }`. Sends its figures to its parent.
import { randomBytes } from 'node:crypto';
import { loadVersion, NS, setUpDatabase } from './runs-version.js';

const config = JSON.parse(process.env.BENCH_CONFIG);
const v = await loadVersion(config.root);
const sql = countStatements(v.pg);
const secretKey = randomBytes(32);
const { database, db, egress } = await setUpDatabase(
  v,
  'mt_bench_runs',
  `http://127.0.0.1:${config.ports.upstream}`,
  secretKey,
);
const realGateway = v.gateway.createGateway({ policy: egress });
let engine;
let cache;
let wakeups;
let lease;
try {
  // Time spent outside the engine, per run (told by its message): each model request (the provider's call, HTTP
  // included) and each gateway call, with their start and end.
  const outside = new Map();
  const note = (key, kind, start) => {
    const entry = outside.get(key) ?? { calls: [] };
    entry.calls.push({ kind, start, end: performance.now() });
    outside.set(key, entry);
  };
  const base = v.createOpenAI({ baseURL: `http://127.0.0.1:${config.ports.model}/v1`, apiKey: 'k' }).chat('fake');
  const model = {
    specificationVersion: base.specificationVersion,
    provider: base.provider,
    modelId: base.modelId,
    supportedUrls: base.supportedUrls,
    async doGenerate(options) {
      const start = performance.now();
      const result = await base.doGenerate(options);
      note(/bench-message-(\d+)-/.exec(JSON.stringify(options.prompt))?.[1], 'model', start);
      return result;
    },
    doStream: (options) => base.doStream(options),
  };
  // A tool call is told by its run's id (its Idempotency-Key's first part): the worker may call it before `startRun`
  // has answered the harness, so its message is looked up when the gaps are counted (callsOf).
  const gateway = {
    ...realGateway,
    async call(input) {
      const start = performance.now();
      const result = await realGateway.call(input);
      note(`run:${input.idempotencyKey.split(':')[0]}`, 'tool', start);
      return result;
    },
  };
  const callsOf = (run) => [...(outside.get(run.n)?.calls ?? []), ...(outside.get(`run:${run.id}`)?.calls ?? [])];
  // As `mt serve` does: the engine's reads go through the process's store cache, a member of the cache lease on the
  // process's wake-up connection, which the engine's run queue shares.
  cache = await v.store.createStoreCache(db, { secretKey });
  wakeups = await v.store.openWakeups(db);
  lease = v.store.startCacheLease({ db, wakeups, cache });
  for (let waited = 0; !cache.live && waited < 100; waited++) await new Promise((r) => setTimeout(r, 50));
  if (!cache.live) throw new Error('the cache lease did not go live within 5 s');
  engine = await v.engine.createEngine({
    db,
    secretKey,
    gateway,
    cache,
    wakeups,
    worker: { concurrency: config.concurrency },
    models: () => ({ model, scripted: false }),
    modelRetries: 0,
  });

  let counter = 0;
  async function oneBatch(count, interaction = 'support') {
    const begun = new Map();
    const ids = await Promise.all(
      Array.from({ length: count }, async () => {
        const n = ++counter;
        const t0 = Date.now();
        const run = await engine.startRun(NS, interaction, { inputs: { message: `bench-message-${n}-` } });
        begun.set(run.id, { n: String(n), t0 });
        return run.id;
      }),
    );
    const pending = new Set(ids);
    const ended = new Map();
    while (pending.size > 0) {
      await new Promise((r) => setTimeout(r, 20));
      const { rows } = await db.query(
        "SELECT id, status, extract(epoch from updated_at) * 1000 AS at FROM mt_runs WHERE id = ANY($1::uuid[]) AND status <> 'Running'",
        [[...pending]],
      );
      for (const row of rows) {
        if (row.status !== 'Completed') throw new Error(`run ${row.id} ended ${row.status}`);
        pending.delete(row.id);
        ended.set(row.id, Number(row.at));
      }
    }
    return ids.map((id) => ({ id, ...begun.get(id), latency: ended.get(id) - begun.get(id).t0 }));
  }

  // The engine's overhead between one outside call's end and the next one's start: four a run.
  function overheads(runs) {
    const gaps = [];
    for (const run of runs) {
      const calls = callsOf(run).sort((a, b) => a.start - b.start);
      const kinds = calls.map((c) => c.kind).join(',');
      if (kinds !== 'model,tool,model,tool,model') throw new Error(`run ${run.id}: calls ${kinds}`);
      for (let i = 1; i < calls.length; i++) gaps.push(calls[i].start - calls[i - 1].end);
    }
    return gaps;
  }
  const outsideTimes = (runs, kind) =>
    runs.flatMap((r) =>
      callsOf(r)
        .filter((c) => c.kind === kind)
        .map((c) => c.end - c.start),
    );

  await oneBatch(config.warmup);
  // The statements of no run (the queue's supervisor, polls, timers), counted while idle, per second.
  const total = () => [...sql.statements.values()].reduce((a, b) => a + b, 0);
  sql.on = true;
  await new Promise((r) => setTimeout(r, 6000));
  sql.on = false;
  const idlePerSecond = total() / 6;
  const idle = new Map(sql.statements);
  sql.statements.clear();
  // One at a time, timed; then runs of one tool call (`lookup`) one at a time with every statement counted (the
  // counting costs CPU on every statement, so not in the timed runs).
  const sequential = [];
  for (let i = 0; i < config.sequential; i++) sequential.push(...(await oneBatch(1)));
  const seqBegin = performance.now();
  sql.on = true;
  for (let i = 0; i < config.sequential; i++) await oneBatch(1, 'lookup');
  sql.on = false;
  const seqSeconds = (performance.now() - seqBegin) / 1000;
  const statementsPerRun = (total() - idlePerSecond * seqSeconds) / config.sequential;
  const statements = Object.fromEntries(
    [...sql.statements].map(([k, n]) => [k, Math.round((n / config.sequential) * 10) / 10]),
  );

  // RUNS at once.
  const begin = performance.now();
  const cpu0 = process.cpuUsage();
  const elu0 = performance.eventLoopUtilization();
  const batch = await oneBatch(config.runs);
  const seconds = (performance.now() - begin) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const elu = performance.eventLoopUtilization(elu0).utilization;

  process.send({
    seqGaps: overheads(sequential),
    seqLatency: sequential.map((r) => r.latency),
    batchGaps: overheads(batch),
    batchLatency: batch.map((r) => r.latency),
    runsPerSecond: config.runs / seconds,
    cpuMsPerRun: (cpu.user + cpu.system) / 1000 / config.runs,
    eventLoopUtilization: elu,
    modelMs: outsideTimes(batch, 'model'),
    toolMs: outsideTimes(batch, 'tool'),
    statementsPerRun,
    idlePerSecond,
    statements,
    idle: Object.fromEntries(idle),
  });
} finally {
  await engine?.close();
  await lease?.close();
  await wakeups?.close();
  await cache?.close();
  await realGateway.close();
  await db.close();
  await database.drop();
}

/**
 * Every statement this process sends to PostgreSQL through the version's `pg` (the store's pool and pg-boss's
 * alike), counted by its first 70 characters while `on`; the bench's own polling of the runs is not counted.
 */
function countStatements(pg) {
  const counter = { on: false, statements: new Map() };
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (config, values, callback) {
    const text = typeof config === 'string' ? config : (config?.text ?? '');
    if (counter.on && !text.startsWith('SELECT id, status, extract')) {
      const key = text.replace(/\s+/g, ' ').slice(0, 70);
      counter.statements.set(key, (counter.statements.get(key) ?? 0) + 1);
    }
    return query.call(this, config, values, callback);
  };
  return counter;
}
