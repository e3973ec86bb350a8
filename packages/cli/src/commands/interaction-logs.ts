import type { RunEvent } from '@maitento/sdk';
import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { printJson } from '../internal/output.js';
import { describeEvent } from '../internal/run-output.js';
import type { RegisterCommand } from './index.js';

/** `mt interaction-logs RUN_ID [--follow]`: the stored events of a run, and with `--follow` the new ones. */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('interaction-logs')
    .description(
      'Print the events of a run (model turns, tool calls and results, approvals); --follow waits for new ones',
    )
    .argument('<run-id>', 'the run id')
    .option('--follow', 'keep printing events as they happen, until the run ends')
    .addHelpText('after', '\nWith --json: a JSON array of events; with --follow --json, one JSON event per line.');
  addJsonOption(addConnectionOptions(command)).action(async (runId: string, flags: ApiFlags & { follow?: boolean }) => {
    await withClient(io, flags, async (client) => {
      if (!flags.follow) {
        const events: RunEvent[] = [];
        for await (const event of client.interactionRuns.storedEvents(runId)) {
          if (flags.json) events.push(event);
          else io.out(describeEvent(event));
        }
        if (flags.json) printJson(io, events);
        return;
      }
      for await (const event of client.interactionRuns.events(runId)) {
        io.out(flags.json ? JSON.stringify(event) : describeEvent(event));
      }
    });
  });
};
