import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { ExitCode } from '../internal/exit-codes.js';
import { CommandExit } from '../internal/output.js';
import { followMark, followRun, topRunOf } from '../internal/run-follow.js';
import { printRunJson } from '../internal/run-output.js';
import type { RegisterCommand } from './index.js';

/** `mt interaction-approve RUN_ID [--approval ID]`: approves the call a run waits on; exactly that call is made. */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('interaction-approve')
    .description('Approve the call a run waits on: exactly the call shown is made, once')
    .argument('<run-id>', 'the run id')
    .option('--approval <id>', 'the approval to answer (default: the one the run waits on)')
    .option('--wait', 'then follow the run, printing what happens, until it ends or waits for a person again')
    .addHelpText(
      'after',
      `
Exit codes: 0 answered (with --wait: Completed, or waiting for a person again), 1 an error or (with --wait)
a run that Failed or was Cancelled, 2 usage.`,
    );
  addJsonOption(addConnectionOptions(command)).action(
    async (runId: string, flags: ApiFlags & { approval?: string; wait?: boolean }) => {
      await withClient(io, flags, async (client) => {
        // Marked before answering, so that only the new steps are printed; the top run is the one followed to its end.
        const top = flags.wait ? await topRunOf(client, runId) : runId;
        const mark = flags.wait ? await followMark(client, top) : undefined;
        const run = await client.interactionRuns.approve(runId, flags.approval ? { approvalId: flags.approval } : {});
        if (flags.wait) {
          io.err(`approved; following run ${top}${top === run.id ? '' : ` (the run at the top of ${run.id})`}`);
          const outcome = await followRun(client, io, top, flags.json === true, mark);
          if (outcome === 'failed') throw new CommandExit(ExitCode.UserError);
          return;
        }
        if (flags.json) return printRunJson(io, run);
        io.err(`approved; run ${run.id} is ${run.status} (follow it with \`mt interaction-logs ${run.id} --follow\`)`);
      });
    },
  );
};
