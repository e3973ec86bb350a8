import { isMtError } from '@maitento/errors';
import { ExitCode, type ExitCodeValue } from './exit-codes.js';

/** Where a command writes: data to `out` (stdout), messages and progress to `err` (stderr). */
export interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
}

/** The process's stdout and stderr. */
export const processIo: Io = {
  out: (text) => process.stdout.write(text.endsWith('\n') ? text : `${text}\n`),
  err: (text) => process.stderr.write(text.endsWith('\n') ? text : `${text}\n`),
};

/** Prints `value` as pretty JSON on stdout. */
export function printJson(io: Io, value: unknown): void {
  io.out(JSON.stringify(value, null, 2));
}

/**
 * Thrown by a command to stop with an exit code after it has printed what it had to say.
 * The only place that turns it into `process.exitCode` is `main`.
 */
export class CommandExit extends Error {
  constructor(readonly exitCode: ExitCodeValue) {
    super(`exit ${exitCode}`);
  }
}

/** Reports an error on stderr (`error [code]: message`, or JSON with `--json`) and returns the user-error exit code. */
export function reportError(io: Io, error: unknown, json = false): ExitCodeValue {
  if (isMtError(error)) {
    if (json) printJson(io, { error: error.message, code: error.code });
    else io.err(`error [${error.code}]: ${error.message}${error.hint ? `\nhint: ${error.hint}` : ''}`);
    return ExitCode.UserError;
  }
  const message = error instanceof Error ? error.message : String(error);
  if (json) printJson(io, { error: message, code: 'api:cli:failed' });
  else io.err(`error: ${message}`);
  return ExitCode.UserError;
}
