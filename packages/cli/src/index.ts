export { buildProgram, run } from './program.js';
export { main } from './main.js';
export { ExitCode } from './internal/exit-codes.js';
export { cliErrors } from './errors.js';
