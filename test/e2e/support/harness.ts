import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { cp, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ServeProcess, startServe } from '../helpers/processes.js';

/** The repository root (also the example config repo). */
export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** The built `mt` of this repository. */
export const MT = join(ROOT, 'packages/cli/bin/mt.js');

/** Fails with a clear message when the CLI has not been built (`npm test` builds first). */
export function requireBuiltCli(): void {
  // bin/mt.js runs the bundle that `npm run build` makes after `tsc -b` (packages/cli/scripts/bundle.js).
  if (!existsSync(join(ROOT, 'packages/cli/dist/bundle/main.js'))) {
    throw new Error('packages/cli/dist/bundle is missing: run `npm run build` (or `npm test`, which builds first)');
  }
}

/** What one `mt` process did. */
export interface MtResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Options of {@link runMt}. */
export interface RunOptions {
  /** Extra environment; the process gets a clean one with its own HOME. */
  env?: Record<string, string | undefined>;
  /** Written to stdin, then closed; without it stdin is empty. */
  input?: string;
  cwd?: string;
}

/** The environment every `mt` process starts from: no settings of the person running the tests. */
export function cleanEnv(home: string): Record<string, string> {
  // MT_PUBLIC_URL at mt serve's default address, as tests set it before the example repo's platform tools named
  // paths on the platform (decision 0260): a test's server on another port overrides it where it calls them.
  // No load balancer watches a test's `mt serve`: a SIGTERM closes its listener at once (a test sets its own window).
  return {
    PATH: process.env.PATH ?? '',
    HOME: home,
    NODE_OPTIONS: '',
    MT_PUBLIC_URL: EXAMPLE_PUBLIC_URL,
    MT_SHUTDOWN_UNREADY_MS: '0',
  };
}

/** The platform URL the example repo's `auth = "Maitento"` tools name: `mt serve`'s default address. */
export const EXAMPLE_PUBLIC_URL = 'http://127.0.0.1:8080';

/** Runs the real `mt` process as a user would and collects its output and exit code. */
export function runMt(args: string[], options: RunOptions & { home: string }): Promise<MtResult> {
  const env: Record<string, string> = cleanEnv(options.home);
  for (const [name, value] of Object.entries(options.env ?? {})) if (value !== undefined) env[name] = value;
  const child = spawn(process.execPath, [MT, ...args], { cwd: options.cwd ?? options.home, env });
  child.stdin.end(options.input ?? '');
  return collect(child, 30_000);
}

function collect(child: ChildProcess, timeoutMs: number): Promise<MtResult> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (c: Buffer) => {
    stdout += c.toString();
  });
  child.stderr?.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`mt did not finish in ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export type { ServeProcess };

/**
 * The platform URL the example config repo's `auth = "Maitento"` connectors call (mt serve's default address):
 * `MT_PUBLIC_URL` of a server, and of `mt check` or `mt deploy`, that takes the example repo.
 */
export const EXAMPLE_PLATFORM_URL = 'http://127.0.0.1:8080';

/**
 * Starts the real `mt serve --port 0` on Postgres `databaseUrl` (with `env` added to its environment) and waits
 * for its `listening on` line.
 */
export function startServer(
  databaseUrl: string,
  bootstrapKey: string,
  home: string,
  env: Record<string, string> = {},
): Promise<ServeProcess> {
  return startServe(home, {
    DATABASE_URL: databaseUrl,
    MT_BOOTSTRAP_KEY: bootstrapKey,
    MT_SECRET_KEY: randomBytes(32).toString('hex'),
    ...env,
  });
}

/** Copies the top-level example config repo into a fresh temporary folder. */
export async function copyExampleRepo(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'mt-e2e-repo-'));
  for (const folder of ['connectors', 'external-operations', 'agents', 'interactions']) {
    await cp(join(ROOT, folder), join(dir, folder), { recursive: true });
  }
  return dir;
}

/** A fresh temporary folder to serve as a user's HOME. */
export function tempHome(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'mt-e2e-home-'));
}

/**
 * Runs `mt` on a pseudo-terminal (through `script`), as a person at a terminal would, and types
 * `typed` followed by Enter once `prompt` appears. Returns everything the terminal showed.
 */
export function runMtInTerminal(
  args: string[],
  options: { home: string; env?: Record<string, string>; prompt: string; typed: string },
): Promise<MtResult> {
  const env: Record<string, string> = { ...cleanEnv(options.home), SHELL: '/bin/sh', ...options.env };
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const command = [process.execPath, MT, ...args].map(quote).join(' ');
  const child = spawn('script', ['-qec', command, '/dev/null'], { cwd: options.home, env });
  let shown = '';
  let typed = false;
  child.stdout.on('data', (c: Buffer) => {
    shown += c.toString();
    if (!typed && shown.includes(options.prompt)) {
      typed = true;
      child.stdin.write(`${options.typed}\r`);
    }
  });
  return collect(child, 30_000);
}
