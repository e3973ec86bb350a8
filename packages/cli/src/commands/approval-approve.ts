import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { printJson } from '../internal/output.js';
import type { RegisterCommand } from './index.js';

/** `mt approval-approve ID`: approves a call; exactly the call shown is made, once. */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('approval-approve')
    .description('Approve a call waiting for a person: exactly the call shown is made, once')
    .argument('<id>', 'the approval id');
  addJsonOption(addConnectionOptions(command)).action(async (id: string, flags: ApiFlags) => {
    await withClient(io, flags, async (client) => {
      const approval = await client.approvals.approve(id);
      if (flags.json) return printJson(io, approval);
      io.err(
        `approved ${approval.functionName} (approval ${approval.id}${approval.runId ? `, run ${approval.runId}` : ''})`,
      );
    });
  });
};
