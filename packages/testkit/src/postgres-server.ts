import { execFileSync } from 'node:child_process';
import { appendFileSync, chmodSync, chownSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.js';

/** Where Debian puts PostgreSQL 15's programs; override with `MT_TEST_PG_BIN`. */
const PG_BIN = process.env.MT_TEST_PG_BIN ?? '/usr/lib/postgresql/15/bin';

/** A PostgreSQL server of a test's own, in a temporary folder, on 127.0.0.1. */
export interface PostgresServer {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` (trust authentication, no password). */
  url: string;
  port: number;
  /** The postmaster's process id (from `postmaster.pid`): a test may SIGSTOP it to freeze the server. */
  pid: number;
  /** Stops the server at once and deletes its folder. */
  stop(): void;
}

/** Options of {@link startPostgresServer}. */
export interface PostgresServerOptions {
  /** With TLS (`ssl = on`): the server's certificate and key (PEM). */
  tls?: { cert: string; key: string };
}

/**
 * Starts a second PostgreSQL (initdb, then pg_ctl start, about 3 s) for a test that needs a server configured
 * otherwise than the shared one: TLS with a certificate the test made. PostgreSQL refuses to run as root, so under
 * root its programs run as the `postgres` user (runuser) in a folder that user owns. Each wait is bounded (pg_ctl -t).
 */
export async function startPostgresServer(options: PostgresServerOptions = {}): Promise<PostgresServer> {
  const dir = mkdtempSync(join(tmpdir(), 'mt-test-pg-'));
  const asRoot = userInfo().uid === 0;
  const owner = asRoot ? Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim()) : undefined;
  const run = (program: string, args: string[]) =>
    execFileSync(
      asRoot ? 'runuser' : join(PG_BIN, program),
      asRoot ? ['-u', 'postgres', '--', join(PG_BIN, program), ...args] : args,
      { stdio: 'pipe', timeout: 30_000 },
    );
  const data = join(dir, 'data');
  const own = (path: string) => {
    if (owner !== undefined) chownSync(path, owner, owner);
  };
  own(dir);
  let started = false;
  try {
    run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '--no-instructions', '-E', 'UTF8']);
    const port = await freePort();
    const settings = [
      `port = ${port}`,
      `listen_addresses = '127.0.0.1'`,
      `unix_socket_directories = '${dir}'`,
      'fsync = off',
      'max_connections = 40',
    ];
    if (options.tls) {
      for (const [name, text] of [
        ['server.crt', options.tls.cert],
        ['server.key', options.tls.key],
      ] as const) {
        const path = join(data, name);
        writeFileSync(path, text);
        chmodSync(path, 0o600);
        own(path);
      }
      settings.push('ssl = on', `ssl_cert_file = 'server.crt'`, `ssl_key_file = 'server.key'`);
    }
    appendFileSync(join(data, 'postgresql.conf'), `\n${settings.join('\n')}\n`);
    run('pg_ctl', ['-D', data, '-l', join(dir, 'log'), '-w', '-t', '20', 'start']);
    started = true;
    return {
      url: `postgres://postgres@127.0.0.1:${port}/postgres`,
      port,
      pid: Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]),
      stop() {
        try {
          run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', '-t', '20', 'stop']);
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      },
    };
  } catch (error) {
    if (started) run('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']);
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}
