import { resolve } from 'node:path';
import { UnprocessableEntityError } from '@maitento/sdk/client';
import { cliErrors } from '../errors.js';
import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { formatPlan, planSummary } from '../internal/deploy-output.js';
import { ExitCode } from '../internal/exit-codes.js';
import { assertConfigRepo, compileLocalRepo, printDiagnostics } from '../internal/local-repo.js';
import { CommandExit, printJson, reportError } from '../internal/output.js';
import type { RegisterCommand } from './index.js';

/**
 * `mt deploy [DIR] [--dry-run] [--prune] [--end-user ID]`: compiles the repo locally (no request at all when it has errors),
 * then sends its files and prints the plan: each resource created, updated or unchanged, and those the repo no
 * longer holds (kept, or with `--prune` deleted in the same transaction). `--end-user` names the person whose
 * connection lists the OAuth2 MCP connectors' servers, so their tools' input schemas are read (decision 0390).
 */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('deploy')
    .description('Compile the config repo, then deploy it: new versions of what changed, nothing else')
    .argument('[dir]', 'the config repo', '.')
    .option('--dry-run', 'print the plan without storing anything')
    .option('--prune', 'delete the resources of the namespace the repo no longer holds (listed as delete in the plan)')
    .option(
      '--end-user <id>',
      "list the OAuth2 MCP connectors' servers with this person's connection, to read their tools' input schemas",
    );
  addJsonOption(addConnectionOptions(command)).action(
    async (dir: string, flags: ApiFlags & { dryRun?: boolean; prune?: boolean; endUser?: string }) => {
      const root = resolve(dir);
      // A missing path, a file or a folder of no config repo: refused as `mt check` refuses it (docs/cli.md).
      try {
        await assertConfigRepo(dir);
      } catch (error) {
        throw new CommandExit(reportError(io, error, flags.json === true));
      }
      const { files, sources, compiled, errors } = await compileLocalRepo(root);
      await printDiagnostics(io, compiled.diagnostics, sources);
      if (errors.length > 0) {
        const error = cliErrors.create('api:cli:config-invalid', { count: errors.length });
        if (flags.json) printJson(io, { error: error.message, code: error.code, diagnostics: compiled.diagnostics });
        else reportError(io, error);
        throw new CommandExit(ExitCode.UserError);
      }
      await withClient(io, flags, async (client) => {
        try {
          const plan = await client.deploy.create({
            files,
            dryRun: flags.dryRun === true,
            ...(flags.prune === true ? { prune: true } : {}),
            ...(flags.endUser === undefined ? {} : { endUser: flags.endUser }),
          });
          // The server's own warnings (a model whose provider it has no key for): the compiler's were printed above.
          const seen = new Set(compiled.diagnostics.map((d) => `${d.code} ${d.file}:${d.line}:${d.column}`));
          const fresh = (plan.warnings ?? []).filter((d) => !seen.has(`${d.code} ${d.file}:${d.line}:${d.column}`));
          if (!flags.json) await printDiagnostics(io, fresh, sources);
          if (flags.json) printJson(io, plan);
          else if (plan.changes.length > 0 || (plan.absent ?? []).length > 0) io.out(formatPlan(plan));
          io.err(planSummary(plan));
        } catch (error) {
          if (!(error instanceof UnprocessableEntityError) || error.diagnostics.length === 0) throw error;
          // The server refused the repo (for example a secret the namespace lacks): shown like local errors.
          if (flags.json) printJson(io, error.body);
          else {
            await printDiagnostics(io, error.diagnostics, sources);
            reportError(io, error);
          }
          throw new CommandExit(ExitCode.UserError);
        }
      });
    },
  );
};
