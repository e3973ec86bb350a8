// Latency measurement shared by the benches: closed-loop workers, rounds combined into calls/s and percentiles.

/** The `p`th percentile of `sorted` (ascending). */
export function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
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
 * (µs, the load generator's) on every round, the CPU time a call too.
 */
export function combine(rounds) {
  const latencies = rounds.flatMap((r) => r.latencies).sort((a, b) => a - b);
  const seconds = rounds.reduce((sum, r) => sum + r.seconds, 0);
  const cpu = rounds.every((r) => r.cpu !== undefined) ? rounds.reduce((sum, r) => sum + r.cpu, 0) : undefined;
  const clientCpu = rounds.every((r) => r.clientCpu !== undefined)
    ? rounds.reduce((sum, r) => sum + r.clientCpu, 0)
    : undefined;
  return {
    calls: latencies.length,
    perSecond: latencies.length / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    cpuPerCall: cpu === undefined ? undefined : cpu / latencies.length,
    clientCpuPerCall: clientCpu === undefined ? undefined : clientCpu / latencies.length,
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
