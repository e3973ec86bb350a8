import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { describeRun, printRunJson } from '../internal/run-output.js';
import type { RegisterCommand } from './index.js';

/** `mt interaction-status RUN_ID`: where a run stands, its answer or error, and the call it waits on. */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('interaction-status')
    .description('Show a run: its status, its answer or error, and the call it waits on')
    .argument('<run-id>', 'the run id');
  addJsonOption(addConnectionOptions(command)).action(async (runId: string, flags: ApiFlags) => {
    await withClient(io, flags, async (client) => {
      const run = await client.interactionRuns.get(runId);
      if (flags.json) return printRunJson(io, run);
      io.out(describeRun(run));
    });
  });
};
