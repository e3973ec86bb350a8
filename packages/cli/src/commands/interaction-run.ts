import { Option } from 'commander';
import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { ExitCode } from '../internal/exit-codes.js';
import { CommandExit } from '../internal/output.js';
import { followRun } from '../internal/run-follow.js';
import { collectInput, collectJsonInput } from '../internal/run-inputs.js';
import { printRunJson } from '../internal/run-output.js';
import { parseVersionArgument } from '../internal/version-toggle.js';
import type { RegisterCommand } from './index.js';

interface RunFlags extends ApiFlags {
  input?: Record<string, unknown>;
  inputJson?: Record<string, unknown>;
  app?: boolean;
  interactive?: boolean;
  version?: number;
  wait?: boolean;
  endUser?: string;
}

/** `mt interaction-run NAME --input NAME=VALUE... [--app] [--wait]`: starts a run, and with `--wait` follows it. */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('interaction-run')
    .description('Start a run of an interaction; with --wait, follow it to its end or to its first wait for a person')
    .argument('<name>', 'the interaction name')
    .option(
      '--input <name=value>',
      'an input as text (repeat it); typed binding inputs are converted by the server',
      collectInput,
    )
    .option('--input-json <name=json>', 'an input as a JSON value (repeat it)', collectJsonInput)
    .addOption(new Option('--interactive', 'a person can be asked to approve calls (the default)').conflicts('app'))
    .addOption(new Option('--app', 'an app run: nobody to ask, a tool that needs approval is not called'))
    .option('--version <n>', 'a version of the interaction instead of the latest', parseVersionArgument)
    .option('--end-user <id>', 'the person the run acts for: its OAuth2 connectors use their connections')
    .option('--wait', 'follow the run, printing what happens, until it ends or waits for a person')
    .addHelpText(
      'after',
      `
Exit codes: 0 started (with --wait: Completed, or waiting for a person), 1 an error or (with --wait)
a run that Failed or was Cancelled, 2 usage.`,
    );
  addJsonOption(addConnectionOptions(command)).action(async (name: string, flags: RunFlags) => {
    await withClient(io, flags, async (client) => {
      const run = await client.interactionRuns.start(name, {
        inputs: { ...flags.input, ...flags.inputJson },
        interactive: flags.app !== true,
        ...(flags.version === undefined ? {} : { version: flags.version }),
        ...(flags.endUser === undefined ? {} : { endUser: flags.endUser }),
      });
      if (!flags.wait) {
        if (flags.json) return printRunJson(io, run);
        io.out(run.id);
        io.err(
          `started run ${run.id} of ${run.interaction.name} version ${run.interaction.version}; ` +
            `follow it with \`mt interaction-logs ${run.id} --follow\``,
        );
        return;
      }
      io.err(`started run ${run.id} of ${run.interaction.name} version ${run.interaction.version}`);
      const outcome = await followRun(client, io, run.id, flags.json === true);
      if (outcome === 'failed') throw new CommandExit(ExitCode.UserError);
    });
  });
};
