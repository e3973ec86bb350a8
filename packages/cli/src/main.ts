import type { RegisterCommand } from './commands/index.js';
import { loadDotEnv } from './internal/dot-env.js';
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

// The commands that load only themselves: the whole program (every command's definition, ~80 modules and ~0.2 s of
// CPU with commander's setup) costs more start-up time than a small import itself, and `mt serve` and `mt worker`
// are started by the hundred in the test suite (issue #22) and by every deploy. Their help and options are their
// own, so nothing they print changes. Anything else gets the whole program.
const STANDALONE = new Map<string, () => Promise<{ register: RegisterCommand }>>([
  ['import', () => import('./commands/import.js')],
  ['serve', () => import('./commands/serve.js')],
  ['worker', () => import('./commands/worker.js')],
]);

async function runArgv(argv: string[]): Promise<ExitCodeValue> {
  const command = STANDALONE.get(argv[2] ?? '');
  if (command !== undefined) {
    const [{ newProgram, runProgram }, { register }] = await Promise.all([import('./program-core.js'), command()]);
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
  // The folder's `.env` before any command reads a setting: the environment's own values win.
  loadDotEnv(process.cwd());
  process.exitCode = await runArgv(argv);
}
