import { run } from './program.js';

export { buildProgram, run } from './program.js';
export { ExitCode } from './internal/exit-codes.js';
export { cliErrors } from './errors.js';

// `mt connector-list | head -1` closes the pipe early: the reader has what it wanted, so stop quietly
// instead of dying with an unhandled EPIPE.
function stopQuietlyOnClosedPipe(stream: NodeJS.WriteStream): void {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(typeof process.exitCode === 'number' ? process.exitCode : 0);
  });
}

/** Entry point of the `mt` executable: the one place that sets `process.exitCode`. */
export async function main(argv: string[]): Promise<void> {
  stopQuietlyOnClosedPipe(process.stdout);
  stopQuietlyOnClosedPipe(process.stderr);
  process.exitCode = await run(argv);
}
