import type { ExitCodeValue } from './internal/exit-codes.js';
import { processIo } from './internal/output.js';

// `mt connector-list | head -1` closes the pipe early: the reader has what it wanted, so stop quietly
// instead of dying with an unhandled EPIPE.
function stopQuietlyOnClosedPipe(stream: NodeJS.WriteStream): void {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(typeof process.exitCode === 'number' ? process.exitCode : 0);
  });
}

/**
 * `mt import` loads only its own command: the whole program (every command, and with them the SDK, the server and
 * the engine) costs more start-up time than a small import itself. Anything else gets the whole program.
 */
async function runArgv(argv: string[]): Promise<ExitCodeValue> {
  if (argv[2] === 'import') {
    const [{ newProgram, runProgram }, { register }] = await Promise.all([
      import('./program-core.js'),
      import('./commands/import.js'),
    ]);
    const program = newProgram(processIo);
    register(program, processIo);
    return runProgram(program, argv, processIo);
  }
  const { run } = await import('./program.js');
  return run(argv);
}

/** Entry point of the `mt` executable: the one place that sets `process.exitCode`. */
export async function main(argv: string[]): Promise<void> {
  stopQuietlyOnClosedPipe(process.stdout);
  stopQuietlyOnClosedPipe(process.stderr);
  process.exitCode = await runArgv(argv);
}
