import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { printJson } from '../internal/output.js';
import type { RegisterCommand } from './index.js';

/** `mt webhook-test ID`: sends a `webhook.test` event; follow it with `mt webhook-deliveries ID`. */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('webhook-test')
    .description('Send a test event (webhook.test) to a webhook endpoint, signed and retried like any other')
    .argument('<id>', 'the endpoint id');
  addJsonOption(addConnectionOptions(command)).action(async (id: string, flags: ApiFlags) => {
    await withClient(io, flags, async (client) => {
      const delivery = await client.webhooks.test(id);
      if (flags.json) return printJson(io, delivery);
      io.out(delivery.id);
      io.err(`queued test delivery ${delivery.messageId}; see it with mt webhook-deliveries ${id}`);
    });
  });
};
