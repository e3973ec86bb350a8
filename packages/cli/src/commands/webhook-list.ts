import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { printJson } from '../internal/output.js';
import { formatTable } from '../internal/table.js';
import type { RegisterCommand } from './index.js';

/** `mt webhook-list`: the namespace's webhook endpoints (never a secret). */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('webhook-list')
    .description('List the outbound webhook endpoints (their secrets are never shown)');
  addJsonOption(addConnectionOptions(command)).action(async (flags: ApiFlags) => {
    await withClient(io, flags, async (client) => {
      const list = await client.webhooks.list();
      if (flags.json) return printJson(io, list);
      if (list.length === 0) return io.err('no webhook endpoints');
      io.out(
        formatTable(
          ['ID', 'URL', 'EVENTS', 'ENABLED', 'OLD SECRET UNTIL'],
          list.map((e) => [
            e.id,
            e.url,
            e.events.length === 0 ? '*' : e.events.join(' '),
            e.enabled ? 'yes' : 'no',
            e.previousSecretUntil ?? '-',
          ]),
        ),
      );
    });
  });
};
