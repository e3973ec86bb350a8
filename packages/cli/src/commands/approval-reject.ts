import { Option } from 'commander';
import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { printJson } from '../internal/output.js';
import type { RegisterCommand } from './index.js';

/** `mt approval-reject ID -r REASON`: rejects a call; it is not made, and the model is told why. */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('approval-reject')
    .description('Reject a call waiting for a person: it is not made, and the model is told your reason')
    .argument('<id>', 'the approval id')
    .addOption(new Option('-r, --reason <reason>', 'why: the model reads it').makeOptionMandatory());
  addJsonOption(addConnectionOptions(command)).action(async (id: string, flags: ApiFlags & { reason: string }) => {
    await withClient(io, flags, async (client) => {
      const approval = await client.approvals.reject(id, { reason: flags.reason });
      if (flags.json) return printJson(io, approval);
      io.err(
        `rejected ${approval.functionName} (approval ${approval.id}${approval.runId ? `, run ${approval.runId}` : ''})`,
      );
    });
  });
};
