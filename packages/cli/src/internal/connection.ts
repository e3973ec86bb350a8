import { cliErrors } from '../errors.js';
import { readLoginFile } from './login-file.js';

/** The server `mt` talks to when nothing else says which. */
export const DEFAULT_API_URL = 'http://127.0.0.1:8080';

/** The `--api` and `--key` options of a command. */
export interface ConnectionFlags {
  api?: string;
  key?: string;
}

/** Where the CLI connects, and where each setting came from (for error messages). */
export interface Connection {
  apiUrl: string;
  apiUrlSource: string;
  apiKey?: string;
  apiKeySource?: string;
}

/**
 * Resolves the server and key: flags win over `MT_API_URL`/`MT_API_KEY`, which win over the login
 * file. The login file's key is only used toward the server it was stored for, so naming another
 * server never sends it a key meant for the first.
 */
export async function resolveConnection(
  flags: ConnectionFlags,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Connection> {
  const fromEnv = (name: string) => (env[name] === undefined || env[name] === '' ? undefined : env[name]);
  const login = await readLoginFile(env);
  let apiUrl = DEFAULT_API_URL;
  let apiUrlSource = 'the default';
  if (flags.api !== undefined) [apiUrl, apiUrlSource] = [flags.api, '--api'];
  else if (fromEnv('MT_API_URL') !== undefined) [apiUrl, apiUrlSource] = [fromEnv('MT_API_URL')!, 'MT_API_URL'];
  else if (login !== undefined) [apiUrl, apiUrlSource] = [login.apiUrl, 'the login file'];
  apiUrl = normaliseApiUrl(apiUrl, apiUrlSource);
  const connection: Connection = { apiUrl, apiUrlSource };
  if (flags.key !== undefined) [connection.apiKey, connection.apiKeySource] = [flags.key, '--key'];
  else if (fromEnv('MT_API_KEY') !== undefined) {
    [connection.apiKey, connection.apiKeySource] = [fromEnv('MT_API_KEY'), 'MT_API_KEY'];
  } else if (login !== undefined && normaliseApiUrl(login.apiUrl, 'the login file') === apiUrl) {
    [connection.apiKey, connection.apiKeySource] = [login.apiKey, 'the login file'];
  }
  return connection;
}

/** Checks that `url` is http(s) and drops a trailing slash. */
export function normaliseApiUrl(url: string, source: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw cliErrors.create('api:cli:api-url-invalid', { url, source });
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw cliErrors.create('api:cli:api-url-invalid', { url, source });
  }
  return parsed.toString().replace(/\/+$/, '');
}
