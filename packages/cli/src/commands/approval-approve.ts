import { cliErrors } from '../errors.js';
import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { printJson } from '../internal/output.js';
import type { RegisterCommand } from './index.js';

interface Flags extends ApiFlags {
  arguments?: string;
  hash?: string;
}

/** `mt approval-approve ID`: approves a call; exactly the call shown (or, edited, the call shown again) is made, once. */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('approval-approve')
    .description('Approve a call waiting for a person: exactly the call shown is made, once')
    .argument('<id>', 'the approval id')
    .option(
      '--arguments <json>',
      "edit, then approve: the arguments to make the call with instead of the model's (a run's approval only)",
    )
    .option(
      '--hash <requestHash>',
      'with --arguments: the requestHash of the approval you read (mt approval-list --json)',
    );
  addJsonOption(addConnectionOptions(command)).action(async (id: string, flags: Flags) => {
    let edit: { arguments: Record<string, unknown>; requestHash?: string } | undefined;
    if (flags.arguments !== undefined) {
      let args: unknown;
      try {
        args = JSON.parse(flags.arguments);
      } catch {
        throw cliErrors.create('api:cli:arguments-invalid', { reason: '--arguments is not JSON' });
      }
      if (typeof args !== 'object' || args === null || Array.isArray(args)) {
        throw cliErrors.create('api:cli:arguments-invalid', { reason: '--arguments is not a JSON object' });
      }
      edit = {
        arguments: args as Record<string, unknown>,
        ...(flags.hash === undefined ? {} : { requestHash: flags.hash }),
      };
    }
    await withClient(io, flags, async (client) => {
      const approval = await client.approvals.approve(id, edit ?? {});
      if (flags.json) return printJson(io, approval);
      const edited = approval.edited ? ` with the edited arguments ${approval.argumentsJson}` : '';
      io.err(
        `approved ${approval.functionName}${edited} (approval ${approval.id}${approval.runId ? `, run ${approval.runId}` : ''}${approval.status === 'Pending' ? ', waiting for more approvers' : ''})`,
      );
    });
  });
};
