import { WEBHOOK_EVENT_TYPES } from '@maitento/sdk/client';
import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { printJson } from '../internal/output.js';
import type { RegisterCommand } from './index.js';

/** The event types an endpoint may ask for (the test event is sent only by `mt webhook-test`). */
export const WEBHOOK_EVENTS = WEBHOOK_EVENT_TYPES.filter((type) => type !== 'webhook.test');

/** `mt webhook-create URL [--event TYPE]... [--description TEXT]`: prints the signing secret, shown this once. */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('webhook-create')
    .description(
      'Add an outbound webhook endpoint; prints its signing secret (Standard Webhooks), which is shown only this once',
    )
    .argument('<url>', 'where deliveries are POSTed (http or https; a private address only if MT_EGRESS_ALLOW allows)')
    .option(
      '--event <type>',
      `an event type to receive (repeat for more; none: every type): ${WEBHOOK_EVENTS.join(', ')}`,
      (type: string, types: string[]) => [...types, type],
      [] as string[],
    )
    .option('--description <text>', 'what the endpoint is for');
  addJsonOption(addConnectionOptions(command)).action(
    async (url: string, flags: ApiFlags & { event: string[]; description?: string }) => {
      await withClient(io, flags, async (client) => {
        const made = await client.webhooks.create({
          url,
          events: flags.event as (typeof WEBHOOK_EVENTS)[number][],
          ...(flags.description === undefined ? {} : { description: flags.description }),
        });
        if (flags.json) return printJson(io, made);
        io.out(made.secret);
        io.err(
          `created webhook ${made.endpoint.id} for ${made.endpoint.events.length === 0 ? 'every event' : made.endpoint.events.join(', ')}; ` +
            'its signing secret went to standard output, only this once: give it to the receiver',
        );
      });
    },
  );
};
