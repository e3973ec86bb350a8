import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { printJson } from '../internal/output.js';
import { describeApproval } from '../internal/run-output.js';
import type { RegisterCommand } from './index.js';

/** `mt approval-get ID`: one approval, with the call's arguments and who answered. */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('approval-get')
    .description('Show an approval: the call it is about, its status, and who answered it')
    .argument('<id>', 'the approval id');
  addJsonOption(addConnectionOptions(command)).action(async (id: string, flags: ApiFlags) => {
    await withClient(io, flags, async (client) => {
      const approval = await client.approvals.get(id);
      if (flags.json) return printJson(io, approval);
      io.out(describeApproval(approval));
    });
  });
};
