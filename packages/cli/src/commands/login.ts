import { type ConnectionFlags, DEFAULT_API_URL, normaliseApiUrl } from '../internal/connection.js';
import { readLoginFile, writeLoginFile } from '../internal/login-file.js';
import { CommandExit, reportError } from '../internal/output.js';
import { readSecretValue } from '../internal/secret-input.js';
import { apiClient, withHint } from '../internal/api.js';
import type { RegisterCommand } from './index.js';

/**
 * `mt login [--api URL] [--key KEY]`: checks the key against the server, then stores both in the
 * user's config folder, readable only by them.
 */
export const register: RegisterCommand = (program, io) => {
  program
    .command('login')
    .description('Check an API key against a server and store both for later commands (file mode 0600)')
    .option('--api <url>', 'the server (default: MT_API_URL, then the stored one, then http://127.0.0.1:8080)')
    .option('--key <key>', 'the API key (default: read from stdin, typed without echo on a terminal)')
    .addHelpText(
      'after',
      '\nThe file is $XDG_CONFIG_HOME/maitento/config.json, or ~/.config/maitento/config.json.\n' +
        'Its key is only sent to the server it was stored with. MT_API_URL/MT_API_KEY and --api/--key win over it.',
    )
    .action(async (flags: ConnectionFlags) => {
      let source = '--api';
      try {
        const stored = flags.api === undefined && !process.env.MT_API_URL ? await readLoginFile() : undefined;
        const [url, from] =
          flags.api !== undefined
            ? [flags.api, '--api']
            : process.env.MT_API_URL
              ? [process.env.MT_API_URL, 'MT_API_URL']
              : stored !== undefined
                ? [stored.apiUrl, 'the login file']
                : [DEFAULT_API_URL, 'the default'];
        source = from;
        const apiUrl = normaliseApiUrl(url, from);
        const apiKey = await readSecretValue(flags.key, 'API key', '--key');
        // Any key may list connectors, so this checks the key without needing the admin role.
        await apiClient(apiUrl, apiKey).connectors.list();
        const file = await writeLoginFile({ apiUrl, apiKey });
        io.err(`logged in to ${apiUrl}; the key is stored in ${file}, readable only by you`);
      } catch (error) {
        if (error instanceof CommandExit) throw error;
        const connection = {
          apiUrl: '',
          apiUrlSource: source,
          apiKeySource: flags.key === undefined ? 'stdin' : '--key',
        };
        throw new CommandExit(reportError(io, withHint(error, connection)));
      }
    });
};
