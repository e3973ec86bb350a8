// npm run bench:runs — 200 concurrent runs of a three-turn interaction (model → tool → model → tool → model answer)
// through the real engine on PostgreSQL: startRun → pg-boss queue → worker → gateway → a local upstream, against a
// fake OpenAI Chat Completions server. Writes runs/s, run latency and the engine's own overhead per step into
// docs/performance.md between its markers (bench/lib/perf-doc.js). Built JS: run `npx tsc -b packages/engine` first.
import { fork } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { createOpenAI } from '@ai-sdk/openai';
import { createEgressPolicy } from '@maitento/egress';
import { createEngine, startTelemetry } from '@maitento/engine';
import { createGateway } from '@maitento/gateway';
import { compileRepo } from '@maitento/lang';
import {
  appendRunEvents,
  createNamespace,
  createPgDb,
  createSecret,
  createStoreCache,
  deploy,
  insertRun,
  migrate,
  openWakeups,
  startCacheLease,
} from '@maitento/store';
import { createTestDatabase } from '@maitento/testkit';
import pg from 'pg';
import { percentile } from './lib/measure.js';
import { provenance, writeBenchSection } from './lib/perf-doc.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 200);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const SEQUENTIAL = Number(process.env.BENCH_SEQUENTIAL ?? 30);
const WARMUP = 10;
// Issue #21's figures: conversations of CONV_TURNS turns, one at a time, and parents handing work to two children.
const CONVERSATIONS = Number(process.env.BENCH_CONVERSATIONS ?? 5);
const CONV_TURNS = Number(process.env.BENCH_CONV_TURNS ?? 20);
const FAMILIES = Number(process.env.BENCH_FAMILIES ?? 20);
// Issue #24's figure: runs one at a time, alternately on an engine without and one with OpenTelemetry.
const OTEL_RUNS = Number(process.env.BENCH_OTEL_RUNS ?? SEQUENTIAL);
const NS = 'bench';

if (process.argv[2] === '--servers') {
  servers();
} else {
  await main();
}

/** The fake model and the upstream, in their own process so their CPU is not charged to the engine. */
function servers() {
  let ids = 0;
  const model = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const results = body.messages.filter((m) => m.role === 'tool').length;
      // The agents of the conversation and agents-as-tools figures are told by their instructions.
      const system = body.messages.find((m) => m.role === 'system')?.content ?? '';
      const text = JSON.stringify(body.messages);
      const special = agentReply(system, text, results, () => `call_${++ids}`);
      if (special !== undefined) {
        const reply = JSON.stringify({
          id: `chatcmpl-${++ids}`,
          object: 'chat.completion',
          created: Math.floor(Date.now() / 1000),
          model: body.model,
          choices: [{ index: 0, message: special, finish_reason: special.tool_calls ? 'tool_calls' : 'stop' }],
          usage: { prompt_tokens: 50, completion_tokens: 10, total_tokens: 60 },
        });
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(reply) });
        res.end(reply);
        return;
      }
      const message =
        results < 2
          ? {
              role: 'assistant',
              content: null,
              tool_calls: [
                {
                  id: `call_${++ids}`,
                  type: 'function',
                  function: {
                    name: 'get-order',
                    arguments: JSON.stringify({ additionalInputs: { 'path.orderId': `A-${results + 1}` } }),
                  },
                },
              ],
            }
          : { role: 'assistant', content: 'Both orders have shipped.' };
      const reply = JSON.stringify({
        id: `chatcmpl-${ids}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: body.model,
        choices: [{ index: 0, message, finish_reason: results < 2 ? 'tool_calls' : 'stop' }],
        usage: { prompt_tokens: 50, completion_tokens: 10, total_tokens: 60 },
      });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(reply) });
      res.end(reply);
    });
  });
  const upstream = createServer((req, res) => {
    req.resume();
    const reply = JSON.stringify({ id: req.url.split('/').pop(), status: 'shipped' });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(reply) });
    res.end(reply);
  });
  model.keepAliveTimeout = 60_000;
  upstream.keepAliveTimeout = 60_000;
  model.listen(0, '127.0.0.1', () =>
    upstream.listen(0, '127.0.0.1', () =>
      process.send?.({ model: model.address().port, upstream: upstream.address().port }),
    ),
  );
  process.on('disconnect', () => process.exit(0));
}

/**
 * The fake model's answers for the agents of the issue #21 figures: the conversation's agent always replies; the
 * parent hands a task to each of its two children in one turn (the task carries the run's bench message, so the
 * children's calls count to their parent's run), then answers; a child answers at once. Undefined for the others.
 */
function agentReply(system, text, results, callId) {
  if (system.includes('You chat with the customer.')) return { role: 'assistant', content: 'Noted, anything else?' };
  if (system.includes('You help the router.')) return { role: 'assistant', content: 'Done.' };
  if (!system.includes('You route work to two helpers.')) return undefined;
  if (results >= 2) return { role: 'assistant', content: 'Both helpers answered.' };
  const key = /bench-message-\d+-/.exec(text)?.[0] ?? '';
  const hand = (agent) => ({
    id: callId(),
    type: 'function',
    function: { name: agent, arguments: JSON.stringify({ task: `${key} part of the work` }) },
  });
  return { role: 'assistant', content: null, tool_calls: [hand('helper-a-agent'), hand('helper-b-agent')] };
}

function repo(upstream) {
  return [
    {
      path: 'agents/chat-agent.mtr',
      content: `model = "openai:fake"\ninstructions = "You chat with the customer."\n`,
    },
    {
      path: 'interactions/conversation/chat.mtr',
      content: `agent = { name = "Chat" agent = @ref("chat-agent") }\ntask = "A customer starts a chat: %%message%%"\ninputs.prompts = [ { name = "message" description = "The first message" required = true } ]\n`,
    },
    {
      path: 'agents/router-agent.mtr',
      content: `model = "openai:fake"\ninstructions = "You route work to two helpers."\nfunctions = [ { agent = @ref("helper-a-agent") }, { agent = @ref("helper-b-agent") } ]\n`,
    },
    ...['a', 'b'].map((x) => ({
      path: `agents/helper-${x}-agent.mtr`,
      content: `model = "openai:fake"\ninstructions = "You help the router."\nsummary = "Helper ${x}"\n`,
    })),
    {
      path: 'interactions/one-shot/router.mtr',
      content: `agent = { name = "Router" agent = @ref("router-agent") }\ntask = "A customer writes: %%message%%"\ninputs.prompts = [ { name = "message" description = "What the customer wrote" required = true } ]\n`,
    },
    {
      path: 'connectors/open-api/orders-get.mtr',
      content: `method = "GET"\nurl = "${upstream}/orders/{orderId}"\ndescription = "One order by its id"\nauth = "Header"\nparameters.path = [ { name = "orderId" description = "The order id" type = "string" } ]\n`,
    },
    {
      path: 'external-operations/open-api/get-order.mtr',
      content: `connector = @ref("orders-get")\nguidance = "Looks up an order by its id."\nauth = { header = "X-Api-Key" secret = @ref("orders-key") }\n`,
    },
    {
      path: 'agents/support-agent.mtr',
      content: `model = "openai:fake"\ninstructions = "Help customers with their orders."\nfunctions = [ { ref = @ref("get-order") } ]\n`,
    },
    {
      path: 'interactions/one-shot/support.mtr',
      content: `agent = { name = "Support" agent = @ref("support-agent") }\ntask = "A customer writes: %%message%%"\ninputs.prompts = [ { name = "message" description = "What the customer wrote" required = true } ]\n`,
    },
  ];
}

function round(n, d = 2) {
  return Number(n.toFixed(d));
}

/**
 * Every statement sent to PostgreSQL by this process, the store's pool and pg-boss's own alike (both go through
 * pg's Client): counted, and the run appends (the fenced `UPDATE mt_runs` with the events insert) timed with the
 * JSON of their events.
 */
function countStatements() {
  const counter = { on: false, statements: new Map(), appends: [], plain: [] };
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (config, values, callback) {
    const text = typeof config === 'string' ? config : (config?.text ?? '');
    const plain = text.startsWith('INSERT INTO bench_plain');
    // The bench's own polling of the runs is not the engine's.
    if (!plain && (!counter.on || text.startsWith('SELECT id, status, extract'))) {
      return query.call(this, config, values, callback);
    }
    if (!plain) {
      const key = text.replace(/\s+/g, ' ').slice(0, 70);
      counter.statements.set(key, (counter.statements.get(key) ?? 0) + 1);
    }
    if (!plain && !text.startsWith('WITH run AS (UPDATE mt_runs SET last_seq'))
      return query.call(this, config, values, callback);
    // Both timed the same way: from the client's query to its answer.
    const t0 = performance.now();
    // The store passes a config object (its text, values and deadline), a plain client (text, values).
    const params = Array.isArray(values) ? values : config?.values;
    // The append's events are its 12th parameter (a boolean, `structured`, follows them); a plain insert's its only one.
    const json = plain ? params?.at(-1) : params?.[11];
    const done = () => (plain ? counter.plain : counter.appends).push({ ms: performance.now() - t0, json });
    // pg's Pool passes a callback; a client of its own gets a promise.
    const cb = typeof values === 'function' ? values : callback;
    if (typeof cb === 'function') {
      const wrapped = (error, result) => {
        done();
        cb(error, result);
      };
      return typeof values === 'function'
        ? query.call(this, config, wrapped)
        : query.call(this, config, values, wrapped);
    }
    return query.call(this, config, values).then((result) => {
      done();
      return result;
    });
  };
  return counter;
}

/** Starts the V8 CPU profiler in this process; the function it resolves with stops it and answers the profile. */
async function startProfile() {
  const { Session } = await import('node:inspector/promises');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 500 });
  await session.post('Profiler.start');
  return async () => {
    const { profile } = await session.post('Profiler.stop');
    session.disconnect();
    return profile;
  };
}

async function main() {
  const sql = countStatements();
  const child = fork(fileURLToPath(import.meta.url), ['--servers'], { stdio: 'inherit' });
  const ports = await new Promise((resolve) => child.once('message', resolve));
  const database = await createTestDatabase('mt_bench_runs');
  const db = createPgDb(database.url);
  // The OpenTelemetry-on engine's own database, and the local OTLP/HTTP receiver it exports to (its own process).
  const otelDatabase = await createTestDatabase('mt_bench_runs_otel');
  const otelDb = createPgDb(otelDatabase.url);
  const otlpProc = fork(fileURLToPath(new URL('./lib/otlp-receiver.js', import.meta.url)), [], { stdio: 'inherit' });
  const otlpUrl = await new Promise((resolve) =>
    otlpProc.once('message', (m) => resolve(`http://127.0.0.1:${m.port}`)),
  );
  let otelEngine;
  let otelCache;
  const egress = createEgressPolicy({ allow: '127.0.0.1/32' });
  const realGateway = createGateway({ policy: egress });
  let engine;
  let cache;
  let wakeups;
  let lease;
  try {
    const secretKey = randomBytes(32);
    const compiled = compileRepo(repo(`http://127.0.0.1:${ports.upstream}`), { egress, knownSecrets: ['orders-key'] });
    if (!compiled.ok) throw new Error(JSON.stringify(compiled.diagnostics));
    for (const d of [db, otelDb]) {
      await migrate(d);
      await createNamespace(d, NS);
      await createSecret(d, secretKey, NS, { name: 'orders-key', value: 'sk-bench' });
      await deploy(d, NS, compiled);
    }

    // Time spent outside the engine, per run: each model request (the AI SDK's provider call, HTTP included)
    // and each gateway call, with their start and end; the run is told by its message (model) or its
    // idempotency key (gateway).
    const outside = new Map();
    const note = (key, kind, start) => {
      const entry = outside.get(key) ?? { calls: [] };
      entry.calls.push({ kind, start, end: performance.now() });
      outside.set(key, entry);
    };
    const provider = createOpenAI({ baseURL: `http://127.0.0.1:${ports.model}/v1`, apiKey: 'k' });
    const base = provider.chat('fake');
    const model = {
      specificationVersion: base.specificationVersion,
      provider: base.provider,
      modelId: base.modelId,
      supportedUrls: base.supportedUrls,
      async doGenerate(options) {
        const start = performance.now();
        const result = await base.doGenerate(options);
        const text = JSON.stringify(options.prompt);
        note(/bench-message-(\d+)-/.exec(text)?.[1], 'model', start);
        return result;
      },
      doStream: (options) => base.doStream(options),
    };
    const runOfMessage = new Map();
    const gateway = {
      ...realGateway,
      async call(input) {
        const start = performance.now();
        const result = await realGateway.call(input);
        note(runOfMessage.get(input.idempotencyKey.split(':')[0]), 'tool', start);
        return result;
      },
    };
    // BENCH_QUERIES=1 prints the statements the engine ran for one run, by their first words.
    const seenSql = new Map();
    if (process.env.BENCH_QUERIES === '1') {
      const query = db.query;
      db.query = (text, params) => {
        const key = text.slice(0, 60);
        seenSql.set(key, (seenSql.get(key) ?? 0) + 1);
        return query(text, params);
      };
    }
    // As `mt serve` does: the engine's reads (the interaction at a start, a tool call's versions and secret) go
    // through the process's store cache, a member of the cache lease on the process's wake-up connection, which the
    // engine's run queue shares.
    cache = await createStoreCache(db, { secretKey });
    wakeups = await openWakeups(db);
    lease = startCacheLease({ db, wakeups, cache });
    for (let waited = 0; !cache.live && waited < 100; waited++) await new Promise((r) => setTimeout(r, 50));
    if (!cache.live) throw new Error('the cache lease did not go live within 5 s');
    engine = await createEngine({
      db,
      secretKey,
      gateway,
      cache,
      wakeups,
      worker: { concurrency: CONCURRENCY },
      models: () => ({ model, scripted: false }),
      modelRetries: 0,
    });

    let counter = 0;
    // `target`: another engine and its database (OpenTelemetry on), or another interaction.
    async function oneBatch(count, target = {}) {
      const runEngine = target.engine ?? engine;
      const runDb = target.db ?? db;
      const begun = new Map();
      const ids = await Promise.all(
        Array.from({ length: count }, async () => {
          const n = ++counter;
          const t0 = Date.now();
          const run = await runEngine.startRun(NS, target.interaction ?? 'support', {
            inputs: { message: `bench-message-${n}-` },
          });
          runOfMessage.set(run.id, String(n));
          begun.set(run.id, { n: String(n), t0 });
          return run.id;
        }),
      );
      const pending = new Set(ids);
      const ended = new Map();
      while (pending.size > 0) {
        await new Promise((r) => setTimeout(r, 20));
        const { rows } = await runDb.query(
          "SELECT id, status, extract(epoch from updated_at) * 1000 AS at FROM mt_runs WHERE id = ANY($1::uuid[]) AND status <> 'Running' AND parent_run_id IS NULL",
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

    // Overhead of the engine between one outside call's end and the next one's start (storing the step just
    // made, re-reading the run, preparing the next call): four such gaps a run, model → tool → model → tool → model.
    function overheads(runs, only, pattern = 'model,tool,model,tool,model') {
      const gaps = [];
      for (const run of runs) {
        const calls = outside.get(run.n)?.calls ?? [];
        calls.sort((a, b) => a.start - b.start);
        if (calls.map((c) => c.kind).join(',') !== pattern) {
          throw new Error(`run ${run.id}: calls ${calls.map((c) => c.kind).join(',')}`);
        }
        for (let i = 1; i < calls.length; i++) {
          if (only === undefined || only === calls[i].kind) gaps.push(calls[i].start - calls[i - 1].end);
        }
      }
      return gaps.sort((a, b) => a - b);
    }

    const sumOutside = (runs, kind) => {
      const times = runs.flatMap((r) =>
        (outside.get(r.n)?.calls ?? []).filter((c) => c.kind === kind).map((c) => c.end - c.start),
      );
      times.sort((a, b) => a - b);
      return { p50: percentile(times, 50), p99: percentile(times, 99) };
    };

    // The reference: a durable single-row write (autocommit INSERT) on the same database, in the same run.
    await db.query('CREATE TABLE bench_probe (id serial PRIMARY KEY, data jsonb)');
    const writes = [];
    for (let i = 0; i < 300; i++) {
      const t0 = performance.now();
      await db.query('INSERT INTO bench_probe (data) VALUES ($1)', [JSON.stringify({ i })]);
      writes.push(performance.now() - t0);
    }
    writes.sort((a, b) => a - b);

    await oneBatch(WARMUP);
    if (process.env.BENCH_QUERIES === '1') {
      seenSql.clear();
      await oneBatch(1);
      console.log(seenSql);
    }

    // One run at a time: the engine's own cost per step with nothing else going on; then as many again with every statement counted.
    // The statements of no run (the queue's supervisor, polls, timers), counted while idle, per second.
    const total = () => [...sql.statements.values()].reduce((a, b) => a + b, 0);
    sql.on = true;
    await new Promise((r) => setTimeout(r, 6000));
    sql.on = false;
    const idlePerSecond = total() / 6;
    if (process.env.BENCH_QUERIES === '1') console.log('idle', sql.statements);
    sql.statements.clear();
    const sequential = [];
    for (let i = 0; i < SEQUENTIAL; i++) sequential.push(...(await oneBatch(1)));
    // Counted in runs of their own, not in the timed ones above: the counting costs CPU on every statement.
    const seqBegin = performance.now();
    sql.on = true;
    for (let i = 0; i < SEQUENTIAL; i++) await oneBatch(1);
    sql.on = false;
    const seqSeconds = (performance.now() - seqBegin) / 1000;
    const statementsPerRun = (total() - idlePerSecond * seqSeconds) / SEQUENTIAL;
    if (process.env.BENCH_QUERIES === '1') console.log('runs', sql.statements);
    // A step's write against a plain INSERT of the same JSON, alternately, on the same connection pool.
    // The steps the runs wrote are written again, each alternately with its plain INSERT, so both see the same
    // moments of a noisy machine: the same statement as the engine's (one run's row, its events), fenced by status.
    await db.query('CREATE TABLE bench_plain (id serial PRIMARY KEY, data json)');
    const steps = sql.appends.map((a) => a.json);
    sql.appends.length = 0;
    const probe = randomUUID();
    const probeRun = { namespace: NS, interaction: 'support', interactionVersion: 1, versions: [], inputs: {} };
    await insertRun(db, { id: probe, ...probeRun, interactive: false }, { type: 'run-started', data: {} });
    sql.on = true;
    for (const [i, json] of steps.entries()) {
      const events = JSON.parse(json).map((e) => ({ type: e.type, data: e.data }));
      const plainInsert = () => db.query('INSERT INTO bench_plain (data) VALUES ($1::json)', [json]);
      const append = () => appendRunEvents(db, probe, { statuses: ['Running'] }, events);
      if (i % 2 === 0) {
        await append();
        await plainInsert();
      } else {
        await plainInsert();
        await append();
      }
    }
    sql.on = false;
    const appendMs = sql.appends.map((a) => a.ms).sort((a, b) => a - b);
    const plain = sql.plain.map((a) => a.ms).sort((a, b) => a - b);
    const { rows: hot } = await db.query(
      "SELECT n_tup_upd::int AS upd, n_tup_hot_upd::int AS hot FROM pg_stat_user_tables WHERE relname = 'mt_runs'",
    );
    const seqGaps = overheads(sequential);
    const seqLatency = sequential.map((r) => r.latency).sort((a, b) => a - b);

    // RUNS at once. BENCH_CPU_PROFILE=file writes a CPU profile of this phase alone (the engine's process: this one).
    const profiler = process.env.BENCH_CPU_PROFILE ? await startProfile() : undefined;
    const begin = performance.now();
    const cpu0 = process.cpuUsage();
    const elu0 = performance.eventLoopUtilization();
    const batch = await oneBatch(RUNS);
    if (profiler) writeFileSync(process.env.BENCH_CPU_PROFILE, JSON.stringify(await profiler()));
    const seconds = (performance.now() - begin) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const elu = performance.eventLoopUtilization(elu0).utilization;
    const gaps = overheads(batch);
    const latency = batch.map((r) => r.latency).sort((a, b) => a - b);
    const { rows: queries } = await db.query(
      "SELECT count(*)::int AS n FROM mt_run_events e JOIN mt_runs r ON r.id = e.run_id WHERE r.status = 'Completed'",
    );

    // Issue #21: conversations of CONV_TURNS turns, one at a time. A turn's engine work is in two parts: from the
    // message (\`sendMessage\`) to the model's request (store the message with the run's job, the pickup, the claim,
    // the history rebuilt), and from the model's reply to the run stored as WaitingForInput (its \`updated_at\`).
    const toModel = [];
    const replyStored = [];
    const firstTurns = [];
    const lastTurns = [];
    // A turn's engine work: both parts, for the turns that follow a message.
    const turnWork = [];
    const keyId = randomUUID();
    const waitingAt = async (id) => {
      for (;;) {
        const { rows } = await db.query(
          'SELECT status, extract(epoch from updated_at) * 1000 AS at FROM mt_runs WHERE id = $1',
          [id],
        );
        if (rows[0].status === 'WaitingForInput') return Number(rows[0].at);
        if (rows[0].status !== 'Running') throw new Error(`conversation ${id} ended ${rows[0].status}`);
        await new Promise((r) => setTimeout(r, 5));
      }
    };
    for (let c = 0; c < CONVERSATIONS; c++) {
      const n = ++counter;
      const run = await engine.startRun(NS, 'chat', { inputs: { message: `bench-message-${n}-` } });
      const sent = [];
      const stored = [];
      for (let turn = 1; ; turn++) {
        stored.push(await waitingAt(run.id));
        if (turn === CONV_TURNS) break;
        sent.push(performance.now());
        await engine.sendMessage(NS, run.id, `Message ${turn} of the customer.`, { keyId, keyName: 'bench' });
      }
      await engine.cancelRun(NS, run.id);
      const models = (outside.get(String(n))?.calls ?? []).sort((a, b) => a.start - b.start);
      if (models.length !== CONV_TURNS) throw new Error(`conversation ${run.id}: ${models.length} model calls`);
      for (const [i, call] of models.entries()) {
        const after = stored[i] - (performance.timeOrigin + call.end);
        const before = i === 0 ? 0 : call.start - sent[i - 1];
        replyStored.push(after);
        if (i > 0) {
          toModel.push(before);
          turnWork.push(before + after);
        }
        if (i === 1) firstTurns.push(before + after);
        if (i === CONV_TURNS - 1) lastTurns.push(before + after);
      }
    }
    for (const list of [toModel, replyStored, firstTurns, lastTurns, turnWork]) list.sort((a, b) => a - b);

    // Issue #21: a parent that hands work to two children in one turn (agents as tools), one at a time: the gaps
    // between the family's model calls, parent → child A → child B → parent (children run one after the other).
    await oneBatch(2, { interaction: 'router' });
    const families = [];
    for (let i = 0; i < FAMILIES; i++) families.push(...(await oneBatch(1, { interaction: 'router' })));
    const familyGaps = overheads(families, undefined, 'model,model,model,model');
    const familyLatency = families.map((r) => r.latency).sort((a, b) => a - b);

    // Issue #24: the same one-shot runs, one at a time, alternately on this engine (OpenTelemetry off) and on a second
    // engine in this process with OpenTelemetry on (its own database, set up alike; spans and metrics exported over
    // OTLP/HTTP protobuf to the local receiver).
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = otlpUrl;
    const telemetry = await startTelemetry();
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    otelCache = await createStoreCache(otelDb, { secretKey });
    otelEngine = await createEngine({
      db: otelDb,
      secretKey,
      gateway,
      cache: otelCache,
      worker: { concurrency: CONCURRENCY },
      models: () => ({ model, scripted: false }),
      modelRetries: 0,
      telemetry,
    });
    const on = { engine: otelEngine, db: otelDb };
    await oneBatch(WARMUP, on);
    const otelOff = [];
    const otelOn = [];
    for (let i = 0; i < OTEL_RUNS; i++) {
      otelOff.push(...(await oneBatch(1)));
      otelOn.push(...(await oneBatch(1, on)));
    }
    const offGaps = overheads(otelOff);
    const onGaps = overheads(otelOn);
    await otelEngine.close();
    const exported = await (await fetch(`${otlpUrl}/counts`)).json();

    const figures = {
      convTurns: CONV_TURNS,
      conversations: CONVERSATIONS,
      convStepP50: round(percentile(turnWork, 50)),
      convStepP99: round(percentile(turnWork, 99)),
      convToModelP50: round(percentile(toModel, 50)),
      convReplyStoredP50: round(percentile(replyStored, 50)),
      convFirstTurnP50: round(percentile(firstTurns, 50)),
      convLastTurnP50: round(percentile(lastTurns, 50)),
      families: FAMILIES,
      familyOverheadP50: round(percentile(familyGaps, 50)),
      familyOverheadP99: round(percentile(familyGaps, 99)),
      familyLatencyP50: Math.round(percentile(familyLatency, 50)),
      otelRuns: OTEL_RUNS,
      otelOffP50: round(percentile(offGaps, 50)),
      otelOnP50: round(percentile(onGaps, 50)),
      otelOffP99: round(percentile(offGaps, 99)),
      otelOnP99: round(percentile(onGaps, 99)),
      otelExported: exported,
      runs: RUNS,
      concurrency: CONCURRENCY,
      seconds: round(seconds),
      runsPerSecond: round(RUNS / seconds, 1),
      latencyP50: Math.round(percentile(latency, 50)),
      latencyP99: Math.round(percentile(latency, 99)),
      overheadP50: round(percentile(gaps, 50)),
      cpuMsPerRun: round((cpu.user + cpu.system) / 1000 / RUNS),
      sysMsPerRun: round(cpu.system / 1000 / RUNS),
      eventLoopUtilization: round(elu),
      overheadP99: round(percentile(gaps, 99)),
      loadBeforeToolP50: round(percentile(overheads(batch, 'tool'), 50)),
      loadBeforeModelP50: round(percentile(overheads(batch, 'model'), 50)),
      model: sumOutside(batch, 'model'),
      tool: sumOutside(batch, 'tool'),
      seqLatencyP50: Math.round(percentile(seqLatency, 50)),
      seqOverheadP50: round(percentile(seqGaps, 50)),
      seqOverheadP99: round(percentile(seqGaps, 99)),
      seqBeforeToolP50: round(percentile(overheads(sequential, 'tool'), 50)),
      seqBeforeModelP50: round(percentile(overheads(sequential, 'model'), 50)),
      seqModel: sumOutside(sequential, 'model'),
      seqTool: sumOutside(sequential, 'tool'),
      events: queries[0].n,
      writeP50: round(percentile(writes, 50), 3),
      statementsPerRun: round(statementsPerRun, 1),
      idleStatementsPerSecond: round(idlePerSecond, 1),
      appendP50: round(percentile(appendMs, 50), 3),
      plainInsertP50: round(percentile(plain, 50), 3),
      appendRatio: round(percentile(appendMs, 50) / percentile(plain, 50)),
      hotUpdates: hot[0] ? `${hot[0].hot} of ${hot[0].upd}` : 'unknown',
    };
    console.log(JSON.stringify(figures, null, 2));
    if (process.env.BENCH_WRITE !== '0') write(figures);
  } finally {
    await engine?.close();
    await otelEngine?.close();
    await lease?.close();
    await wakeups?.close();
    await cache?.close();
    await otelCache?.close();
    await realGateway.close();
    await db.close();
    await otelDb.close();
    await database.drop();
    await otelDatabase.drop();
    child.disconnect();
    otlpProc.disconnect();
  }
}

function write(f) {
  const ms = (x) => x.toFixed(2);
  const met = f.overheadP50 < 3 && f.seqOverheadP50 < 3;
  const section = `## Runs: the engine (\`npm run bench:runs\`)

${provenance('npx tsc -b && npm run bench:runs')}

${f.runs} runs started at once of a three-turn interaction (model → tool → model → tool → model) through the real engine
on PostgreSQL: \`startRun\` → the \`mt-run\` queue → a worker (${f.concurrency} slots, and its limit on the runs doing engine
work: docs/runs.md) → the AI SDK's OpenAI provider against a fake Chat Completions server, and the gateway against an
upstream, both on 127.0.0.1 in another process. Run latency is from \`startRun\` to the run's final write (with
${f.runs} at once, mostly queueing). The engine's overhead a step is the time between one outside call's end and the next
one's start (store the step, rebuild the conversation, read the cache, assemble the next call); four a run.

| | runs/s | run latency p50 / p99 (ms) | engine overhead a step p50 / p99 (ms) | model call p50 (ms) | tool call p50 (ms) |
| --- | --- | --- | --- | --- | --- |
| ${f.runs} at once, ${f.concurrency} slots | ${f.runsPerSecond} | ${f.latencyP50} / ${f.latencyP99} | ${ms(f.overheadP50)} / ${ms(f.overheadP99)} | ${ms(f.model.p50)} | ${ms(f.tool.p50)} |
| one at a time (${SEQUENTIAL} runs) | — | ${f.seqLatencyP50} / — | ${ms(f.seqOverheadP50)} / ${ms(f.seqOverheadP99)} | ${ms(f.seqModel.p50)} | ${ms(f.seqTool.p50)} |
| ${f.convTurns}-turn conversation (${f.conversations}) | — | — | ${ms(f.convStepP50)} / ${ms(f.convStepP99)} | — | — |
| parent with two children (${f.families}) | — | ${f.familyLatencyP50} / — | ${ms(f.familyOverheadP50)} / ${ms(f.familyOverheadP99)} | — | — |
| one at a time, OpenTelemetry off / on (${f.otelRuns}) | — | — | ${ms(f.otelOffP50)} / ${ms(f.otelOnP50)} (p50) | — | — |

- With ${f.runs} at once: ${ms(f.loadBeforeToolP50)} ms before a tool call, ${ms(f.loadBeforeModelP50)} ms before a model call (p50); ${ms(f.cpuMsPerRun)} ms of
  CPU a run (${ms(f.sysMsPerRun)} ms in the kernel); the event loop ${Math.round(f.eventLoopUtilization * 100)}% busy.
- One at a time: ${ms(f.seqBeforeToolP50)} ms before a tool call, ${ms(f.seqBeforeModelP50)} ms before a model call (p50). A durable single-row
  \`INSERT\` on the same database: p50 ${ms(f.writeP50)} ms.
- Statements a run, one at a time: **${f.statementsPerRun}** (less the ${f.idleStatementsPerSecond} a second sent with no run at all; aim ≤ 8:
  **${f.statementsPerRun <= 8 ? 'met' : 'not met'}**; \`BENCH_QUERIES=1\` lists them). A step's write p50 ${ms(f.appendP50)} ms against ${ms(f.plainInsertP50)} ms for a plain \`INSERT\`
  of the same JSON: ${f.appendRatio}× (aim ≤ 1.5×: **${f.appendRatio <= 1.5 ? 'met' : 'not met'}**). HOT updates of \`mt_runs\`: ${f.hotUpdates}.
- Aim: under 3 ms of engine overhead a step at p50: **${met ? 'met' : 'not met'}** (${ms(f.overheadP50)} ms under load, ${ms(f.seqOverheadP50)} ms alone).
- OpenTelemetry on (#24): ${ms(f.otelOnP50 - f.otelOffP50)} ms more a step at p50; the receiver got ${f.otelExported.requests} exports
  (${Math.round(f.otelExported.bytes / 1024)} KiB).`;
  writeBenchSection('runs', section);
}
