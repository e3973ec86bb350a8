import { Command, CommanderError } from 'commander';
import { ExitCode, type ExitCodeValue } from './internal/exit-codes.js';
import { CommandExit, type Io, reportError } from './internal/output.js';

/** The `mt` program with its root options and help, and no command yet. */
export function newProgram(io: Io): Command {
  const program = new Command('mt')
    .description('Maitento: let LLM agents call HTTP APIs safely')
    .version('0.1.0')
    .exitOverride()
    // Root options (only --version and --help) must come before the command: `mt extop-versions x --version`
    // is then an unknown option of that command (exit 2), not the CLI's version.
    .enablePositionalOptions()
    .configureOutput({ writeOut: (s) => io.out(s), writeErr: (s) => io.err(s) })
    .showHelpAfterError(false);
  program.addHelpText(
    'after',
    `
Environment:
  MT_API_URL        the server the CLI talks to (default http://127.0.0.1:8080)
  MT_API_KEY        the API key it sends
  MT_EGRESS_ALLOW   comma-separated CIDRs and host names tools may call although they are not public
  DATABASE_URL      PostgreSQL for \`mt serve\`; without it an embedded PGlite database is used

Exit codes: 0 success, 1 user error, 2 usage.`,
  );
  return program;
}

/** Runs `program` with `argv` (as `process.argv`) and returns the exit code; sets nothing itself. */
export async function runProgram(program: Command, argv: string[], io: Io): Promise<ExitCodeValue> {
  try {
    await program.parseAsync(argv);
    return ExitCode.Ok;
  } catch (error) {
    if (error instanceof CommandExit) return error.exitCode;
    if (error instanceof CommanderError) {
      if (
        error.code === 'commander.helpDisplayed' ||
        error.code === 'commander.version' ||
        error.code === 'commander.help'
      ) {
        return ExitCode.Ok;
      }
      return ExitCode.Usage;
    }
    return reportError(io, error);
  }
}
