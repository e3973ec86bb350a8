import { ExitCode } from '../internal/exit-codes.js';
import { compileLocalRepo, printDiagnostics } from '../internal/local-repo.js';
import { CommandExit, printJson, reportError } from '../internal/output.js';
import type { RegisterCommand } from './index.js';

interface CheckFlags {
  json?: boolean;
  tools?: boolean;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** `mt check [DIR]`: compiles a config repo locally and reports every problem, compiler-style. */
export const register: RegisterCommand = (program, io) => {
  program
    .command('check')
    .description('Compile a config repo (.mtr files) and report every problem; nothing is sent anywhere')
    .argument('[dir]', 'the config repo', '.')
    .option('--json', 'print resources and diagnostics as JSON on stdout')
    .option('--tools', "also print each tool's model-facing definition")
    .addHelpText(
      'after',
      `
Environment:
  MT_EGRESS_ALLOW   private ranges and internal names connector URLs may use (off by default)
  MT_PUBLIC_URL     the platform's own API, the only full URL an auth = "Maitento" connector may call
                    (a path on the platform, url = "/v1/...", needs none)

Exit codes: 0 no error (warnings allowed), 1 at least one error.`,
    )
    .action(async (dir: string, flags: CheckFlags) => {
      let local: Awaited<ReturnType<typeof compileLocalRepo>>;
      try {
        local = await compileLocalRepo(dir);
      } catch (error) {
        throw new CommandExit(reportError(io, error, flags.json));
      }
      const { compiled: repo, sources } = local;
      const errors = local.errors.length;
      const warnings = repo.diagnostics.length - errors;
      const tools = [...repo.definitions.values()];

      if (flags.json) {
        const out: Record<string, unknown> = {
          resources: repo.sources.map(({ kind, name, file }) => ({ kind, name, file })),
          diagnostics: repo.diagnostics.map(({ code, severity, message, file, line, column }) => ({
            code,
            severity,
            message,
            file,
            line,
            column,
          })),
        };
        if (flags.tools) out.tools = tools;
        printJson(io, out);
      } else {
        await printDiagnostics(io, repo.diagnostics, sources);
        if (flags.tools) {
          for (const tool of tools) io.out(`${tool.name}\n${JSON.stringify(tool, null, 2)}\n`);
        }
        const files = repo.sources.length;
        io.err(
          `${errors === 0 ? 'ok' : 'failed'}: ${plural(files, 'resource')} checked, ${plural(errors, 'error')}, ${plural(warnings, 'warning')}`,
        );
      }
      if (errors > 0) throw new CommandExit(ExitCode.UserError);
    });
};
