import type { Io } from './output.js';

/**
 * Says `ready` on stderr, then waits for SIGINT or SIGTERM, closes `running` and says so (`mt serve`, `mt worker`).
 * The handlers are in place before the first line is written: whoever waits for that line (a test, a supervisor)
 * may signal at once, and a process descheduled between its write and its `process.on` died of the signal's
 * default action instead of stopping cleanly (seen on a loaded machine, 1–3 starts in 10).
 */
export async function runUntilSignal(io: Io, running: { close: () => Promise<void> }, ready: string[]): Promise<void> {
  await new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      io.err(`${signal}: stopping`);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    for (const line of ready) io.err(line);
  });
  await running.close();
  io.err('stopped');
}
