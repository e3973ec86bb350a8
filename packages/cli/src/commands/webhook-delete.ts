import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { printJson } from '../internal/output.js';
import type { RegisterCommand } from './index.js';

/** `mt webhook-delete ID`: deletes an endpoint and its delivery log. */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('webhook-delete')
    .description('Delete a webhook endpoint and its delivery log (its pending deliveries are not sent)')
    .argument('<id>', 'the endpoint id');
  addJsonOption(addConnectionOptions(command)).action(async (id: string, flags: ApiFlags) => {
    await withClient(io, flags, async (client) => {
      await client.webhooks.delete(id);
      if (flags.json) return printJson(io, { id, deleted: true });
      io.err(`deleted webhook ${id}`);
    });
  });
};
