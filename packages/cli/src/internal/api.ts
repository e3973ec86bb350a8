import { MtError } from '@maitento/errors';
import { APIConnectionError, AuthenticationError, Maitento } from '@maitento/sdk/client';
import type { Command } from 'commander';
import { cliErrors } from '../errors.js';
import { httpFetch } from './http-fetch.js';
import { type Connection, type ConnectionFlags, resolveConnection } from './connection.js';
import { CommandExit, type Io, reportError } from './output.js';

/** The options every command that talks to a server has. */
export interface ApiFlags extends ConnectionFlags {
  json?: boolean;
}

/** Adds `--api URL` and `--key KEY` to a command that talks to a server. */
export function addConnectionOptions(command: Command): Command {
  return command
    .option('--api <url>', 'the server (default: MT_API_URL, then the login file, then http://127.0.0.1:8080)')
    .option('--key <key>', 'the API key (default: MT_API_KEY, then the login file)');
}

/** Adds `--json` (print the data as JSON on stdout). */
export function addJsonOption(command: Command): Command {
  return command.option('--json', 'print the result as JSON on stdout');
}

/** Resolves the connection and makes an SDK client for it; refuses when no key is known. */
export async function connect(flags: ConnectionFlags): Promise<{ client: Maitento; connection: Connection }> {
  const connection = await resolveConnection(flags);
  if (connection.apiKey === undefined) throw cliErrors.create('api:cli:key-missing', { url: connection.apiUrl });
  return { client: apiClient(connection.apiUrl, connection.apiKey), connection };
}

/**
 * The SDK's client for a command: on node:http (`httpFetch`) instead of Node.js's `fetch`, whose undici a command
 * would load for ~0.12 s of CPU.
 */
export function apiClient(baseUrl: string, apiKey: string | undefined): Maitento {
  return new Maitento({ baseUrl, apiKey, fetch: httpFetch as unknown as typeof fetch });
}

/**
 * Runs a command body with a client; any error is reported once (`error [code]: message` on stderr,
 * or `{ error, code }` on stdout with `--json`) with a hint on how to fix the connection, and turned
 * into exit code 1.
 */
export async function withClient(
  io: Io,
  flags: ApiFlags,
  body: (client: Maitento, connection: Connection) => Promise<void>,
): Promise<void> {
  let connection: Connection | undefined;
  try {
    const connected = await connect(flags);
    connection = connected.connection;
    await body(connected.client, connection);
  } catch (error) {
    if (error instanceof CommandExit) throw error;
    throw new CommandExit(reportError(io, withHint(error, connection), flags.json === true));
  }
}

/** Rewrites the hint of connection and authentication errors to name the CLI's settings. */
export function withHint(error: unknown, connection: Connection | undefined): unknown {
  if (connection === undefined) return error;
  if (error instanceof APIConnectionError) {
    return new MtError(error.code, error.status, error.message, {
      hint: `the server URL came from ${connection.apiUrlSource}; set it with --api URL, MT_API_URL or \`mt login --api URL\`, and check the server is running`,
    });
  }
  if (error instanceof AuthenticationError) {
    return new MtError(error.code, error.status, error.message, {
      hint: `the key came from ${connection.apiKeySource}; set it with --key, MT_API_KEY or \`mt login\``,
    });
  }
  return error;
}
