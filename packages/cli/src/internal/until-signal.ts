import type { Io } from './output.js';

/**
 * Says `ready` on stderr, then waits for SIGINT or SIGTERM, closes `running` and says so (`mt serve`, `mt worker`).
 * The handlers are in place before the first line is written: whoever waits for that line (a test, a supervisor)
 * may signal at once, and a process descheduled between its write and its `process.on` died of the signal's
 * default action instead of stopping cleanly (seen on a loaded machine, 1–3 starts in 10).
 */
export async function runUntilSignal(
  io: Io,
  running: { close: () => Promise<void>; shutdown?: (signal: NodeJS.Signals) => Promise<void>; graceMs?: number },
  ready: string[],
): Promise<void> {
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    const stop = (received: NodeJS.Signals) => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      io.err(`${received}: stopping`);
      resolve(received);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    for (const line of ready) io.err(line);
  });
  if (running.shutdown === undefined || running.graceMs === undefined) {
    await running.close();
    io.err('stopped');
    return;
  }
  // The shutdown ends within its grace (MT_SHUTDOWN_GRACE_MS, docs/operations.md "Shutdown"); should a part of it
  // hang past that, the process exits anyway: a run still held is retried by the queue once its heartbeat stops, and
  // its call is replayed with the same Idempotency-Key.
  const graceMs = running.graceMs;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), graceMs);
  });
  const ended = await Promise.race([running.shutdown(signal).then(() => true), late]);
  clearTimeout(timer);
  if (ended) {
    io.err('stopped');
    return;
  }
  io.err(`shutdown grace of ${graceMs} ms passed: exiting now`);
  process.exit(1);
}
