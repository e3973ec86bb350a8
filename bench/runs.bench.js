// npm run bench:runs — issue #42's figures of the run engine, for this checkout and for the baseline commit 3251c0c
// (the queue before its rewrite onto pg-boss's public API) in the same run, in alternating rounds (A/B, then B/A, ...)
// so both see the same moments of a shared machine:
// - engine rounds (bench/lib/runs-engine.js, one process a round and version): statements a run of one tool call,
//   the engine's overhead a step one run at a time and with RUNS at once, runs/s;
// - recovery samples (bench/lib/runs-recovery.js): a real `mt worker` SIGKILLed holding a run mid-step, the time until
//   another `mt worker` resumes it.
// Both versions are driven through their own packages the same way (bench/lib/runs-version.js); the baseline's tree is
// made once under .bench-cache/ (bench/lib/baseline.js). Writes the bench:runs section of docs/performance.md.
// Built: run `npm run build` first (`mt worker` is the CLI's bundle). BENCH_WRITE=0: print only.
import { execFileSync, fork } from 'node:child_process';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { baselineTree, REPO_ROOT } from './lib/baseline.js';
import { median, percentile } from './lib/measure.js';
import { provenance, writeBenchSection } from './lib/perf-doc.js';

const BASELINE = '3251c0c';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const RUNS = Number(process.env.BENCH_RUNS ?? 200);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const SEQUENTIAL = Number(process.env.BENCH_SEQUENTIAL ?? 20);
const WARMUP = 10;

/** Forks `script` with `config`; resolves with the one message it sends, rejects when it exits without one. */
function child(script, config) {
  return new Promise((resolve, reject) => {
    const proc = fork(fileURLToPath(new URL(`./lib/${script}`, import.meta.url)), [], {
      env: { ...process.env, BENCH_CONFIG: JSON.stringify(config) },
      stdio: 'inherit',
    });
    let answer;
    proc.once('message', (m) => {
      answer = m;
    });
    proc.once('exit', (code) =>
      answer ? resolve(answer) : reject(new Error(`${script} (${config.root}) exited with ${code}`)),
    );
  });
}

const sorted = (values) => [...values].sort((a, b) => a - b);
const round = (n, d = 2) => Number(n.toFixed(d));

const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO_ROOT, encoding: 'utf8' }).trim();
const dirty = execFileSync('git', ['status', '--porcelain', '--', 'packages'], { cwd: REPO_ROOT, encoding: 'utf8' });
const current = { name: `${head}${dirty.trim() ? ' + changes' : ''}`, root: REPO_ROOT };
let baseline;
let baselineError;
try {
  baseline = { name: BASELINE, root: baselineTree(BASELINE).root };
} catch (error) {
  baselineError = error.message;
  console.error(`bench: no baseline: ${baselineError}`);
}
const versions = baseline ? [baseline, current] : [current];

const servers = fork(fileURLToPath(new URL('./lib/runs-servers.js', import.meta.url)), [], { stdio: 'inherit' });
const ports = await new Promise((resolve) => servers.once('message', resolve));
const results = new Map(versions.map((v) => [v.name, { engine: [], recovery: [] }]));
const loads = [];
try {
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 === 0 ? versions : [...versions].reverse();
    for (const v of order) {
      console.error(`bench: round ${r + 1} of ${ROUNDS}, ${v.name}: engine`);
      const config = {
        root: v.root,
        ports,
        runs: RUNS,
        sequential: SEQUENTIAL,
        concurrency: CONCURRENCY,
        warmup: WARMUP,
      };
      results.get(v.name).engine.push(await child('runs-engine.js', config));
      console.error(`bench: round ${r + 1} of ${ROUNDS}, ${v.name}: recovery`);
      results.get(v.name).recovery.push(await child('runs-recovery.js', { root: v.root, ports }));
      loads.push(loadavg()[0]);
    }
  }
} finally {
  servers.disconnect();
}

/** One version's figures over all its rounds: gaps and latencies pooled, runs/s and statements their median. */
function figures(name) {
  const { engine, recovery } = results.get(name);
  const seq = sorted(engine.flatMap((e) => e.seqGaps));
  const batch = sorted(engine.flatMap((e) => e.batchGaps));
  const resume = sorted(recovery.map((s) => s.resumeMs / 1000));
  return {
    name,
    statementsPerRun: round(median(engine.map((e) => e.statementsPerRun)), 1),
    statementRounds: engine.map((e) => round(e.statementsPerRun, 1)),
    idlePerSecond: round(median(engine.map((e) => e.idlePerSecond)), 1),
    seqP50: round(percentile(seq, 50)),
    seqP99: round(percentile(seq, 99)),
    batchP50: round(percentile(batch, 50)),
    batchP99: round(percentile(batch, 99)),
    batchRoundP50s: engine.map((e) => round(percentile(sorted(e.batchGaps), 50))),
    runsPerSecond: round(median(engine.map((e) => e.runsPerSecond)), 1),
    latencyP50: Math.round(percentile(sorted(engine.flatMap((e) => e.batchLatency)), 50)),
    cpuMsPerRun: round(median(engine.map((e) => e.cpuMsPerRun))),
    resumeMedian: round(median(resume), 1),
    resumeMax: round(resume.at(-1), 1),
    resumeSamples: resume.map((s) => round(s, 1)),
    completeMedian: round(median(recovery.map((s) => s.completeMs / 1000)), 1),
    statements: engine.at(-1).statements,
  };
}

const now = figures(current.name);
const base = baseline ? figures(baseline.name) : undefined;
console.log(JSON.stringify({ current: now, baseline: base, baselineError, loads }, null, 2));
if (process.env.BENCH_WRITE !== '0') write(now, base);

function write(f, b) {
  const ms = (x) => x.toFixed(2);
  const row = (x) =>
    `| ${x.name} | ${x.statementsPerRun} | ${ms(x.seqP50)} / ${ms(x.seqP99)} | ${ms(x.batchP50)} / ${ms(x.batchP99)} | ${x.runsPerSecond} | ${x.resumeMedian} / ${x.resumeMax} |`;
  const met = (ok) => `**${ok ? 'met' : 'not met'}**`;
  const aims = [
    `- Statements a run of one tool call ≤ 12: ${met(f.statementsPerRun <= 12)} (${f.statementsPerRun}; rounds ${f.statementRounds.join(', ')}${b ? `; ${b.name}: ${b.statementsPerRun}` : ''}).`,
    b
      ? `- Engine overhead a step with ${RUNS} at once no worse than ${b.name}'s (p50): ${met(f.batchP50 <= b.batchP50)} (${ms(f.batchP50)} ms against ${ms(b.batchP50)} ms; a round's p50: ${f.batchRoundP50s.map(ms).join(', ')} against ${b.batchRoundP50s.map(ms).join(', ')}).`
      : `- Engine overhead a step with ${RUNS} at once no worse than ${BASELINE}'s: **not measured** (no baseline, below).`,
    `- A killed worker's run resumed within 15 s: ${met(f.resumeMax <= 15)} (median ${f.resumeMedian} s, max ${f.resumeMax} s; samples ${f.resumeSamples.join(', ')} s${b ? `; ${b.name}: ${b.resumeSamples.join(', ')} s` : ''}).`,
  ];
  const section = `## Runs: the engine (\`npm run bench:runs\`)

${provenance(`npm run build && ${process.env.MT_DB_TIMEOUT_MS ? `MT_DB_TIMEOUT_MS=${process.env.MT_DB_TIMEOUT_MS} ` : ''}npm run bench:runs`)} Load average 1 min after each round: ${loads.map((l) => l.toFixed(1)).join(', ')}.

Issue #42's figures for this checkout and for ${BASELINE} (the queue before its rewrite onto pg-boss's public API),
measured in the same run in ${ROUNDS} alternating rounds (A/B, B/A, ...), each version through its own packages the
same way (bench/lib/runs-version.js; the baseline's tree built once under \`.bench-cache/\`). A round: the version's
engine with its worker (${CONCURRENCY} slots) in one process on a fresh database, runs started with \`startRun\` → the
\`mt-run\` queue → the worker → the AI SDK's OpenAI provider against a fake Chat Completions server, and the gateway
against an upstream (both on 127.0.0.1 in another process). The engine's overhead a step is the time between one
outside call's end and the next one's start, four a run of model → tool → model → tool → model, pooled over the
rounds (${SEQUENTIAL} runs one at a time and ${RUNS} started at once a round). Statements a run: every statement the
process sends (the store's pool and pg-boss's alike) over ${SEQUENTIAL} runs of one tool call (model → tool → model) one
at a time, less what it sends with no run at all (${f.idlePerSecond} a second${b ? `; ${b.name}: ${b.idlePerSecond}` : ''}); the median of the
rounds. Recovery: two real \`mt worker\` processes of the version; the one sending a run's tool call (held unanswered
by the upstream) is killed with SIGKILL; the time until another sends the call again, one sample a round.

| version | statements a run of one tool call | overhead a step, one at a time, p50 / p99 (ms) | overhead a step, ${RUNS} at once, p50 / p99 (ms) | runs/s, ${RUNS} at once | recovery median / max (s) |
| --- | --- | --- | --- | --- | --- |
${b ? `${row(b)}\n` : ''}${row(f)}

${aims.join('\n')}
- Where the time of a step with ${RUNS} at once goes: one append each, which waited on PostgreSQL's notify lock held through every notifying commit's WAL flush; an append notifies only while a stream watches its run ([0365](decisions/0365-a-run-wakes-its-streams-only-while-watched.md)).${b ? '' : `\n\nThe baseline ${BASELINE} could not be built or run: ${baselineError.replace(/\s+/g, ' ').slice(0, 400)}\n`}
- With ${RUNS} at once: run latency p50 ${f.latencyP50} ms${b ? ` (${b.name}: ${b.latencyP50})` : ''}; ${ms(f.cpuMsPerRun)} ms of CPU a run${b ? ` (${b.name}: ${ms(b.cpuMsPerRun)})` : ''}. A resumed run completed ${f.completeMedian} s after the kill (median${b ? `; ${b.name}: ${b.completeMedian} s` : ''}).`;
  writeBenchSection('runs', section);
}
