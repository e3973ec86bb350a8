import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { printJson } from '../internal/output.js';
import { formatTable } from '../internal/table.js';
import type { RegisterCommand } from './index.js';

/** `mt connection-get ID`: one connection (never its tokens). */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('connection-get')
    .description('Show one connection: provider, end user, status, scopes and times (tokens are never shown)')
    .argument('<id>', 'the connection id');
  addJsonOption(addConnectionOptions(command)).action(async (id: string, flags: ApiFlags) => {
    await withClient(io, flags, async (client) => {
      const c = await client.connections.get(id);
      if (flags.json) return printJson(io, c);
      io.out(
        formatTable(
          ['FIELD', 'VALUE'],
          [
            ['id', c.id],
            ['provider', c.provider],
            ['end user', c.endUser],
            ['status', c.status],
            ['scopes', c.scopes.join(' ')],
            ['refresh token', c.hasRefreshToken ? 'yes' : 'no'],
            ['access token expires', c.accessTokenExpiresAt ?? 'not said'],
            ['created', c.createdAt],
            ['updated', c.updatedAt],
          ],
        ),
      );
    });
  });
};
