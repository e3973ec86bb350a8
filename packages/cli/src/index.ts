import { run } from './program.js';

export { buildProgram, run } from './program.js';
export { ExitCode } from './internal/exit-codes.js';
export { cliErrors } from './errors.js';

/** Entry point of the `mt` executable: the one place that sets `process.exitCode`. */
export async function main(argv: string[]): Promise<void> {
  process.exitCode = await run(argv);
}
