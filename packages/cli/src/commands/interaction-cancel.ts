import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { printRunJson } from '../internal/run-output.js';
import type { RegisterCommand } from './index.js';

/** `mt interaction-cancel RUN_ID`: cancels a run that has not ended. */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('interaction-cancel')
    .description('Cancel a run that has not ended')
    .argument('<run-id>', 'the run id');
  addJsonOption(addConnectionOptions(command)).action(async (runId: string, flags: ApiFlags) => {
    await withClient(io, flags, async (client) => {
      const run = await client.interactionRuns.cancel(runId);
      if (flags.json) return printRunJson(io, run);
      io.err(`cancelled run ${run.id} (status ${run.status})`);
    });
  });
};
