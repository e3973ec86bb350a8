import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { printJson } from '../internal/output.js';
import { formatTable } from '../internal/table.js';
import type { RegisterCommand } from './index.js';

interface ListFlags extends ApiFlags {
  provider?: string;
  user?: string;
}

/** `mt connection-list`: end users' connections (never a token). */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('connection-list')
    .description("List end users' connections at auth providers (tokens are never shown)")
    .option('--provider <name>', 'only the connections at this auth provider')
    .option('--user <id>', 'only the connections of this end user');
  addJsonOption(addConnectionOptions(command)).action(async (flags: ListFlags) => {
    await withClient(io, flags, async (client) => {
      const list = await client.connections.list({
        ...(flags.provider === undefined ? {} : { provider: flags.provider }),
        ...(flags.user === undefined ? {} : { endUser: flags.user }),
      });
      if (flags.json) return printJson(io, list);
      if (list.length === 0) return io.err('no connections');
      io.out(
        formatTable(
          ['ID', 'PROVIDER', 'END USER', 'STATUS', 'SCOPES', 'UPDATED'],
          list.map((c) => [c.id, c.provider, c.endUser, c.status, c.scopes.join(' '), c.updatedAt]),
        ),
      );
    });
  });
};
