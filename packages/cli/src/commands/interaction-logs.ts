import type { RunEvent } from '@maitento/sdk';
import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { printJson } from '../internal/output.js';
import { describeEvent } from '../internal/run-output.js';
import type { RegisterCommand } from './index.js';

/**
 * `mt interaction-logs RUN_ID [--follow]`: the stored events of a run, and with `--follow` the new ones, each child
 * run's (agents as tools) indented under the call that started it.
 */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('interaction-logs')
    .description(
      'Print the events of a run (model turns, tool calls and results, approvals); --follow waits for new ones',
    )
    .argument('<run-id>', 'the run id')
    .option(
      '--follow',
      "keep printing events as they happen, until the run ends; a sub-agent's child run's are indented under it",
    )
    .addHelpText(
      'after',
      "\nWith --json: a JSON array of events; with --follow --json, one JSON event per line (the run's own only).",
    );
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
      if (flags.json) {
        for await (const event of client.interactionRuns.events(runId)) io.out(JSON.stringify(event));
        return;
      }
      // A call that hands a task to an agent starts a child run, whose steps are in its own stream (the parent's has
      // nothing while it goes on or waits for a person): printed there, indented under a line naming it, to its end.
      const follow = async (id: string, indent: string): Promise<void> => {
        for await (const event of client.interactionRuns.events(id)) {
          io.out(`${indent}${describeEvent(event).replaceAll('\n', `\n${indent}`)}`);
          const child = event.type === 'tool-call-started' ? event.data.childRunId : undefined;
          if (typeof child === 'string') {
            io.out(`${indent}    run ${child}, agent ${String(event.data.name)}:`);
            await follow(child, `${indent}    `);
          }
        }
      };
      await follow(runId, '');
    });
  });
};
