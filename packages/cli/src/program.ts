import type { Command } from 'commander';
import { commands } from './commands/index.js';
import type { ExitCodeValue } from './internal/exit-codes.js';
import { type Io, processIo } from './internal/output.js';
import { newProgram, runProgram } from './program-core.js';

/** Builds the `mt` program with every command registered. */
export function buildProgram(io: Io = processIo): Command {
  const program = newProgram(io);
  for (const register of commands) register(program, io);
  return program;
}

/** Runs `mt` with `argv` (as `process.argv`) and returns the exit code; sets nothing itself. */
export async function run(argv: string[], io: Io = processIo): Promise<ExitCodeValue> {
  return runProgram(buildProgram(io), argv, io);
}
