import { type ChildProcess, spawn } from 'node:child_process';
import { readdir, readFile, readlink } from 'node:fs/promises';
// harness.ts imports this module too: its bindings are read only inside functions, so either may load first.
import { cleanEnv, MT } from '../support/harness.js';

/** A running `mt worker` process. */
export interface WorkerProcess {
  pid: number;
  child: ChildProcess;
  /** Everything it wrote so far (stderr and stdout). */
  log(): string;
  /** Kills it with SIGKILL and waits for it to be gone. */
  kill(): Promise<void>;
  /** Stops it with SIGTERM (SIGKILL after 5 s). */
  stop(): Promise<void>;
}

/** Waits until the child has exited. */
function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** The pid, log and stop/kill controls of a started `mt` process. */
function controls(child: ChildProcess, log: () => string): WorkerProcess {
  return {
    pid: child.pid ?? 0,
    child,
    log,
    kill: async () => {
      const done = exited(child);
      child.kill('SIGKILL');
      await done;
    },
    stop: async () => {
      const done = exited(child);
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await done;
      clearTimeout(timer);
    },
  };
}

/**
 * Starts the real `mt worker` with a clean environment plus `env`, and waits until it says it is
 * working (its `executing runs` line on stderr); rejects with its output when it exits first or after 60 s.
 */
export async function startWorker(home: string, env: Record<string, string>, mt = MT): Promise<WorkerProcess> {
  const child = spawn(process.execPath, [mt, 'worker'], { cwd: home, env: { ...cleanEnv(home), ...env } });
  let log = '';
  child.stdout?.on('data', (c: Buffer) => {
    log += c.toString();
  });
  await new Promise<void>((resolve, reject) => {
    // Ready is the worker's own line, or its exit; a loaded machine may take several seconds for either.
    // 60 s, as `mt serve`'s start below: at load 22-24 a worker took more than 30 s (mcp-connector-recovery).
    const timer = setTimeout(() => reject(new Error(`mt worker did not start in 60 s:\n${log}`)), 60_000);
    child.stderr?.on('data', (c: Buffer) => {
      log += c.toString();
      if (/executing runs/.test(log)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`mt worker exited with ${code}:\n${log}`));
    });
  });
  child.removeAllListeners('exit');
  return controls(child, () => log);
}

/**
 * Which of `pids` holds the TCP connection whose local port on 127.0.0.1 is `port` (the remote port an
 * upstream saw), from /proc: the socket's inode in /proc/net/tcp, then the process with that inode open.
 */
export async function pidOfLocalPort(port: number, pids: number[]): Promise<number | undefined> {
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = await readFile(table, 'utf8').catch(() => '');
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length > 9 && cols[1].endsWith(`:${hex}`)) inodes.add(cols[9]);
    }
  }
  for (const pid of pids) {
    const fds = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
    for (const fd of fds) {
      const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
      const m = /^socket:\[(\d+)\]$/.exec(target);
      if (m && inodes.has(m[1])) return pid;
    }
  }
  return undefined;
}

/** A running `mt serve` process (the API and a worker). */
export interface ServeProcess extends WorkerProcess {
  url: string;
}

/**
 * Starts the real `mt serve --port 0 --host 127.0.0.1 ...args` with a clean environment plus `env` (no
 * DATABASE_URL means PGlite) and waits for its `listening on` line; rejects with its output when it exits first
 * or after 60 s (four servers starting at once took over 30 s at load 20-25, with nothing wrong but the load).
 * The one way tests start `mt serve` (harness.ts's `startServer` is this on a PostgreSQL URL). `mt` is the executable,
 * this repository's unless a test runs another release's (helpers/previous-release.ts).
 */
export async function startServe(
  home: string,
  env: Record<string, string>,
  args: string[] = [],
  mt = MT,
): Promise<ServeProcess> {
  const child = spawn(process.execPath, [mt, 'serve', '--port', '0', '--host', '127.0.0.1', ...args], {
    cwd: home,
    env: { ...cleanEnv(home), ...env },
  });
  let log = '';
  child.stdout?.on('data', (c: Buffer) => {
    log += c.toString();
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`mt serve did not start in 60 s:\n${log}`)), 60_000);
    child.stderr?.on('data', (c: Buffer) => {
      log += c.toString();
      const match = /listening on (http:\/\/\S+)/.exec(log);
      if (match) {
        clearTimeout(timer);
        resolve(match[1].replace(/\/+$/, ''));
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`mt serve exited with ${code}:\n${log}`));
    });
  });
  child.removeAllListeners('exit');
  return { url, ...controls(child, () => log) };
}
