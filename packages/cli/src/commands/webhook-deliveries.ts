import { WEBHOOK_DELIVERY_STATUSES } from '@maitento/sdk/client';
import { InvalidArgumentError, Option } from 'commander';
import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { printJson } from '../internal/output.js';
import { formatTable } from '../internal/table.js';
import type { RegisterCommand } from './index.js';

function limit(text: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1 || value > 500) throw new InvalidArgumentError('a number from 1 to 500');
  return value;
}

/** `mt webhook-deliveries ID [--status S] [--limit N]`: an endpoint's delivery log, newest first. */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('webhook-deliveries')
    .description("A webhook endpoint's delivery log, newest first: status, attempts, last error, next attempt")
    .argument('<id>', 'the endpoint id')
    .addOption(
      new Option('--status <status>', 'only deliveries of this status').choices([...WEBHOOK_DELIVERY_STATUSES]),
    )
    .option('--limit <n>', 'at most this many (default 50)', limit);
  addJsonOption(addConnectionOptions(command)).action(
    async (id: string, flags: ApiFlags & { status?: (typeof WEBHOOK_DELIVERY_STATUSES)[number]; limit?: number }) => {
      await withClient(io, flags, async (client) => {
        const list = await client.webhooks.deliveries(id, {
          ...(flags.status === undefined ? {} : { status: flags.status }),
          ...(flags.limit === undefined ? {} : { limit: flags.limit }),
        });
        if (flags.json) return printJson(io, list);
        if (list.length === 0) return io.err('no deliveries');
        io.out(
          formatTable(
            ['WEBHOOK-ID', 'EVENT', 'STATUS', 'ATTEMPTS', 'LAST', 'NEXT ATTEMPT', 'CREATED'],
            list.map((d) => [
              d.messageId,
              d.eventType,
              d.status,
              String(d.attempts),
              d.lastError ?? (d.lastStatus === null ? '-' : String(d.lastStatus)),
              d.nextAttemptAt ?? '-',
              d.createdAt,
            ]),
          ),
        );
      });
    },
  );
};
