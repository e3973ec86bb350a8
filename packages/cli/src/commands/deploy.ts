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
 * `mt deploy [DIR] [--dry-run]`: compiles the repo locally (no request at all when it has errors),
 * then sends its files and prints the plan: each resource created, updated or unchanged.
 */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('deploy')
    .description('Compile the config repo, then deploy it: new versions of what changed, nothing else')
    .argument('[dir]', 'the config repo', '.')
    .option('--dry-run', 'print the plan without storing anything');
  addJsonOption(addConnectionOptions(command)).action(async (dir: string, flags: ApiFlags & { dryRun?: boolean }) => {
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
        const plan = await client.deploy.create({ files, dryRun: flags.dryRun === true });
        if (flags.json) printJson(io, plan);
        else if (plan.changes.length > 0) io.out(formatPlan(plan));
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
  });
};
