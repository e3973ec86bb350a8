import type { Io } from './output.js';

/** Waits for SIGINT or SIGTERM, then closes `running` and says so on stderr (`mt serve`, `mt worker`). */
export async function runUntilSignal(io: Io, running: { close: () => Promise<void> }): Promise<void> {
  await new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      io.err(`${signal}: stopping`);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await running.close();
  io.err('stopped');
}
