import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { printJson } from '../internal/output.js';
import type { RegisterCommand } from './index.js';

interface LinkFlags extends ApiFlags {
  user: string;
  scope?: string[];
  returnUrl?: string;
}

/** `mt connection-link PROVIDER --user ID`: a connect link for an end user (the URL to hand them). */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('connection-link')
    .description("Make a connect link: the auth provider's URL an end user opens once, within 10 minutes, to connect")
    .argument('<provider>', 'the auth provider (auth-providers/<name>.mtr)')
    .requiredOption('--user <id>', "your application's id of the end user")
    .option('--scope <scope...>', "scopes to ask for besides the provider's own")
    .option('--return-url <url>', 'where the person is sent afterwards, with connection=<id> added');
  addJsonOption(addConnectionOptions(command)).action(async (provider: string, flags: LinkFlags) => {
    await withClient(io, flags, async (client) => {
      const link = await client.connections.createLink({
        provider,
        endUser: flags.user,
        ...(flags.scope === undefined ? {} : { scopes: flags.scope }),
        ...(flags.returnUrl === undefined ? {} : { returnUrl: flags.returnUrl }),
      });
      if (flags.json) return printJson(io, link);
      io.out(link.url);
      io.err(`open it as ${link.endUser} before ${link.expiresAt} (once)`);
    });
  });
};
