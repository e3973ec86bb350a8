import { chmod, mkdir, open, readFile, rename } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { cliErrors } from '../errors.js';

/** What `mt login` stores: the server and the key for it. */
export interface LoginSettings {
  apiUrl: string;
  apiKey: string;
}

/** `$XDG_CONFIG_HOME/maitento/config.json`, or `~/.config/maitento/config.json`. */
export function loginFilePath(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_CONFIG_HOME;
  const base = xdg !== undefined && isAbsolute(xdg) ? xdg : join(env.HOME || homedir(), '.config');
  return join(base, 'maitento', 'config.json');
}

/** Reads the login file; `undefined` when there is none. */
export async function readLoginFile(env: NodeJS.ProcessEnv = process.env): Promise<LoginSettings | undefined> {
  const file = loginFilePath(env);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw cliErrors.create('api:cli:login-file-invalid', { file, reason: (error as Error).message });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw cliErrors.create('api:cli:login-file-invalid', { file, reason: 'it is not JSON' });
  }
  const settings = value as Partial<LoginSettings> | null;
  if (typeof settings?.apiUrl !== 'string' || typeof settings.apiKey !== 'string') {
    throw cliErrors.create('api:cli:login-file-invalid', { file, reason: 'it needs "apiUrl" and "apiKey" strings' });
  }
  return { apiUrl: settings.apiUrl, apiKey: settings.apiKey };
}

/**
 * Writes the login file readable only by its owner: the folder 0700, the file 0600. It is written to
 * a temporary file with mode 0600 from the start and renamed, so the key is never readable by others,
 * not even for a moment, and a crash never leaves half a file.
 */
export async function writeLoginFile(settings: LoginSettings, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const file = loginFilePath(env);
  const folder = dirname(file);
  await mkdir(folder, { recursive: true, mode: 0o700 });
  await chmod(folder, 0o700);
  const temporary = `${file}.${process.pid}.tmp`;
  const handle = await open(temporary, 'w', 0o600);
  try {
    await handle.chmod(0o600);
    await handle.writeFile(`${JSON.stringify(settings, null, 2)}\n`);
  } finally {
    await handle.close();
  }
  await rename(temporary, file);
  return file;
}
