import type { Command } from 'commander';
import type { Io } from '../internal/output.js';

/** A command module: adds one `mt` command to the program. */
export type RegisterCommand = (program: Command, io: Io) => void;

// One line per command file; keep alphabetical. Each file exports `register`.
export const commands: RegisterCommand[] = [];
