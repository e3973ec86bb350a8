import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { printRunJson } from '../internal/run-output.js';
import type { RegisterCommand } from './index.js';

/** `mt interaction-approve RUN_ID [--approval ID]`: approves the call a run waits on; exactly that call is made. */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('interaction-approve')
    .description('Approve the call a run waits on: exactly the call shown is made, once')
    .argument('<run-id>', 'the run id')
    .option('--approval <id>', 'the approval to answer (default: the one the run waits on)');
  addJsonOption(addConnectionOptions(command)).action(
    async (runId: string, flags: ApiFlags & { approval?: string }) => {
      await withClient(io, flags, async (client) => {
        const run = await client.interactionRuns.approve(runId, flags.approval ? { approvalId: flags.approval } : {});
        if (flags.json) return printRunJson(io, run);
        io.err(`approved; run ${run.id} is ${run.status} (follow it with \`mt interaction-logs ${run.id} --follow\`)`);
      });
    },
  );
};
