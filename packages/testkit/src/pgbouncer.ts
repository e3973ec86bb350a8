import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chownSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.js';

/** Where Debian puts PgBouncer; override with `MT_TEST_PGBOUNCER`. */
const PGBOUNCER = process.env.MT_TEST_PGBOUNCER ?? '/usr/sbin/pgbouncer';

/** A PgBouncer of a test's own on 127.0.0.1, in front of a PostgreSQL server. */
export interface PgBouncer {
  port: number;
  /** `url` with its host and port replaced by the pooler's (same user, database and parameters). */
  through(url: string): string;
  /** What PgBouncer logged so far (its refusals and errors). */
  log(): string;
  /** Stops it (SIGTERM, then SIGKILL after 2 s) and deletes its folder. */
  stop(): Promise<void>;
}

/** Options of {@link startPgBouncer}. */
export interface PgBouncerOptions {
  /** PgBouncer's `pool_mode`. */
  mode: 'transaction' | 'session';
  /** The PostgreSQL it pools (default 127.0.0.1:5432, trust authentication as user postgres). */
  server?: { host: string; port: number };
  /** Server connections per database and user (`default_pool_size`, default 20). */
  poolSize?: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * Starts Debian's PgBouncer (about 0.1 s) with every database of `server` (`* =`), trust authentication for user
 * postgres, in `mode`, and no setting beyond the defaults a managed service would have (no
 * `ignore_startup_parameters`, no `max_prepared_statements`). PgBouncer refuses to run as root: under root it is
 * told to switch to the `postgres` user (its `-u`), in a folder that user owns. Waits at most 5 s for its port.
 */
export async function startPgBouncer(options: PgBouncerOptions): Promise<PgBouncer> {
  const dir = mkdtempSync(join(tmpdir(), 'mt-test-pgbouncer-'));
  const asRoot = userInfo().uid === 0;
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(dir, uid, gid);
  }
  const server = options.server ?? { host: '127.0.0.1', port: 5432 };
  const port = await freePort();
  const logFile = join(dir, 'pgbouncer.log');
  writeFileSync(join(dir, 'users.txt'), '"postgres" ""\n');
  writeFileSync(
    join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${server.host} port=${server.port}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      "unix_socket_dir = ''",
      'auth_type = trust',
      `auth_file = ${join(dir, 'users.txt')}`,
      `pool_mode = ${options.mode}`,
      'max_client_conn = 1000',
      `default_pool_size = ${options.poolSize ?? 20}`,
      `logfile = ${logFile}`,
      'log_connections = 0',
      'log_disconnections = 0',
      '',
    ].join('\n'),
  );
  const child: ChildProcess = spawn(PGBOUNCER, [...(asRoot ? ['-u', 'postgres'] : []), join(dir, 'pgbouncer.ini')], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk) => {
    stderr += String(chunk);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const log = () => {
    let text = '';
    try {
      text = readFileSync(logFile, 'utf8');
    } catch {
      // Not written yet.
    }
    return `${text}${stderr}`;
  };
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 2000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const until = Date.now() + 5000;
  while (!(await accepts(port))) {
    if (child.exitCode !== null || Date.now() > until) {
      const why = log();
      await stop();
      throw new Error(`PgBouncer did not start on port ${port}: ${why}`);
    }
    await sleep(25);
  }
  return {
    port,
    through(url: string) {
      const parsed = new URL(url);
      parsed.hostname = '127.0.0.1';
      parsed.port = String(port);
      return parsed.toString();
    },
    log,
    stop,
  };
}
