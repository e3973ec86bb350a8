// Latency measurement shared by the benches: closed-loop workers, rounds combined into calls/s and percentiles.
import { readdirSync, readFileSync } from 'node:fs';

/**
 * A process's threads' scheduler counters from Linux's /proc/PID/task/TID/schedstat, summed: ns on a core (`run`),
 * ns ready to run but waiting for a core (`wait`) and the times put on a core (`slices`); undefined elsewhere.
 */
export function schedStat(pid) {
  try {
    const sum = { run: 0, wait: 0, slices: 0 };
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const [run, wait, slices] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ').map(Number);
      sum.run += run;
      sum.wait += wait;
      sum.slices += slices;
    }
    return sum;
  } catch {
    return undefined;
  }
}

/**
 * The time a process's threads have spent waiting for a core, in µs ({@link schedStat}'s `wait`); undefined
 * elsewhere. At concurrency 1 a call's latency holds every such wait of the processes it passes through, so a run
 * whose wait a call is high was measured on a busy machine.
 */
export function runQueueWaitMicros(pid) {
  const stat = schedStat(pid);
  return stat === undefined ? undefined : stat.wait / 1000;
}

/** The `p`th percentile of `sorted` (ascending). */
export function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** The median of `values` in any order (left as given). */
export function median(values) {
  return percentile(
    [...values].sort((a, b) => a - b),
    50,
  );
}

/** Runs `call` with `concurrency` workers until `calls` calls or `maxMs`; returns the latencies in µs and the time. */
export async function measure(call, concurrency, calls, maxMs) {
  const latencies = [];
  let started = 0;
  const begin = performance.now();
  const deadline = begin + maxMs;
  async function worker() {
    while (started < calls && performance.now() < deadline) {
      started++;
      const t0 = performance.now();
      await call();
      latencies.push((performance.now() - t0) * 1000);
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { latencies, seconds: (performance.now() - begin) / 1000 };
}

/**
 * Calls/s over all rounds, and percentiles over every latency of them; with `cpu` (µs, the server's) or `clientCpu`
 * (µs, the load generator's) on every round, the CPU time a call too; with `wait` (µs, `runQueueWaitMicros` of the
 * processes a call passes through), the wait for a core a call.
 */
export function combine(rounds) {
  const latencies = rounds.flatMap((r) => r.latencies).sort((a, b) => a - b);
  const seconds = rounds.reduce((sum, r) => sum + r.seconds, 0);
  const cpu = rounds.every((r) => r.cpu !== undefined) ? rounds.reduce((sum, r) => sum + r.cpu, 0) : undefined;
  const clientCpu = rounds.every((r) => r.clientCpu !== undefined)
    ? rounds.reduce((sum, r) => sum + r.clientCpu, 0)
    : undefined;
  const wait = rounds.every((r) => r.wait !== undefined) ? rounds.reduce((sum, r) => sum + r.wait, 0) : undefined;
  return {
    calls: latencies.length,
    perSecond: latencies.length / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    cpuPerCall: cpu === undefined ? undefined : cpu / latencies.length,
    clientCpuPerCall: clientCpu === undefined ? undefined : clientCpu / latencies.length,
    waitPerCall: wait === undefined ? undefined : wait / latencies.length,
  };
}

/** The `q` quantile (0–1) of `[value, weight]` pairs: the first value, in ascending order, whose cumulative weight reaches q. */
export function weightedQuantile(pairs, q) {
  const sorted = [...pairs].sort((a, b) => a[0] - b[0]);
  const total = sorted.reduce((sum, [, w]) => sum + w, 0);
  let acc = 0;
  for (const [value, weight] of sorted) {
    acc += weight;
    if (acc >= q * total) return value;
  }
  return sorted.at(-1)?.[0];
}

/**
 * A row's latency added over a baseline measured in the same alternating rounds. For each round, the row's p50 less
 * the baseline's p50 of that round; `median` is the median of those differences, each round weighted by the row's
 * calls in it (so every call counts alike, as in a p50 over all calls, while a load that changes between rounds
 * falls on both sides of each difference; a round stalled by other work holds few calls and weighs little), `low` and
 * `high` their weighted quartiles, `pooled` the row's p50 over every call less the baseline's (the figure before).
 */
export function addedOver(rounds, baselineRounds) {
  const pairs = rounds.map((r, i) => [median(r.latencies) - median(baselineRounds[i].latencies), r.latencies.length]);
  const pooled = (rs) => median(rs.flatMap((r) => r.latencies));
  return {
    median: weightedQuantile(pairs, 0.5),
    low: weightedQuantile(pairs, 0.25),
    high: weightedQuantile(pairs, 0.75),
    pooled: pooled(rounds) - pooled(baselineRounds),
  };
}

/** `fn(arg)` called `count` times one after the other, each timed alone: the latencies in µs, in call order. */
export function timeEach(fn, arg, count) {
  const times = [];
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    fn(arg);
    times.push((performance.now() - t0) * 1000);
  }
  return times;
}
