import { APPROVAL_STATUSES } from '@maitento/sdk';
import { Option } from 'commander';
import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { printJson } from '../internal/output.js';
import { approvalTable } from '../internal/run-output.js';
import type { RegisterCommand } from './index.js';

const STATUSES = [...APPROVAL_STATUSES, 'all'] as const;

/** `mt approval-list [--status S] [--run ID]`: the calls waiting for a person (or answered ones). */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('approval-list')
    .description('List approvals: the calls waiting for a person (--status all for every one)')
    .addOption(new Option('--status <status>', 'which ones (default Pending)').choices(STATUSES))
    .option('--run <id>', 'only those of this run');
  addJsonOption(addConnectionOptions(command)).action(
    async (flags: ApiFlags & { status?: (typeof STATUSES)[number]; run?: string }) => {
      await withClient(io, flags, async (client) => {
        const approvals = await client.approvals.list({ status: flags.status, runId: flags.run });
        if (flags.json) return printJson(io, approvals);
        if (approvals.length === 0)
          io.err(flags.status && flags.status !== 'Pending' ? 'no approvals' : 'no pending approvals');
        else io.out(approvalTable(approvals));
      });
    },
  );
};
