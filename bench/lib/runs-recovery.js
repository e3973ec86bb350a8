// bench:runs' recovery harness, one process per sample and version: two real `mt worker` processes of the version on
// a fresh database, a run started through the version's engine (API only, no worker here, as `mt serve` starts one),
// its tool call held by the upstream; the worker that sent it (found by the connection's port) is killed with SIGKILL,
// and the time until another worker sends the call again (the run resumed from its last stored step) is measured.
// BENCH_CONFIG: `{ root, ports }`. Sends `{ resumeMs, completeMs }` to its parent.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { readdir, readFile, readlink } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadVersion, NS, setUpDatabase } from './runs-version.js';

const config = JSON.parse(process.env.BENCH_CONFIG);
const v = await loadVersion(config.root);
const requests = [];
let hold = false;
const upstream = createServer((req, res) => {
  req.resume();
  const entry = { url: req.url, port: req.socket.remotePort, at: performance.now() };
  requests.push(entry);
  if (hold) {
    hold = false;
    return; // never answered: the connection ends when its process dies
  }
  const answer = JSON.stringify({ id: req.url.split('/').pop(), status: 'shipped' });
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) });
  res.end(answer);
});
await new Promise((resolve) => upstream.listen(0, '127.0.0.1', resolve));
const secretKey = randomBytes(32);
const { database, db, egress } = await setUpDatabase(
  v,
  'mt_bench_recovery',
  `http://127.0.0.1:${upstream.address().port}`,
  secretKey,
);
const gateway = v.gateway.createGateway({ policy: egress });
const home = mkdtempSync(join(tmpdir(), 'mt-bench-recovery-'));
const env = {
  PATH: process.env.PATH,
  HOME: home,
  DATABASE_URL: database.url,
  MT_SECRET_KEY: secretKey.toString('hex'),
  MT_EGRESS_ALLOW: '127.0.0.1/32',
  MT_LOG_LEVEL: 'warn',
  OPENAI_BASE_URL: `http://127.0.0.1:${config.ports.model}/v1`,
  OPENAI_API_KEY: 'k',
};
const workers = [];
let engine;
try {
  workers.push(...(await Promise.all([startWorker(), startWorker()])));
  engine = await v.engine.createEngine({ db, secretKey, gateway, worker: false });
  hold = true;
  const run = await engine.startRun(NS, 'support', { inputs: { message: 'bench-recovery-' } });
  const held = await until(() => requests[0], 60_000, 'the tool call never came');
  const pid = await pidOfLocalPort(
    held.port,
    workers.map((w) => w.pid),
  );
  if (pid === undefined) throw new Error(`no worker holds the connection from port ${held.port}`);
  const victim = workers.find((w) => w.pid === pid);
  const gone = new Promise((resolve) => victim.once('exit', resolve));
  victim.kill('SIGKILL');
  const killedAt = performance.now();
  await gone;
  const again = await until(
    () => requests.find((r) => r.at > killedAt && r.url === held.url),
    120_000,
    'the run was not resumed within 120 s',
  );
  const resumeMs = again.at - killedAt;
  await until(
    async () => {
      const { rows } = await db.query('SELECT status FROM mt_runs WHERE id = $1', [run.id]);
      if (rows[0].status !== 'Running' && rows[0].status !== 'Completed') throw new Error(`run ${rows[0].status}`);
      return rows[0].status === 'Completed';
    },
    120_000,
    'the resumed run did not complete',
  );
  process.send({ resumeMs, completeMs: performance.now() - killedAt });
} finally {
  await Promise.all(
    workers.map((w) => {
      if (w.exitCode !== null || w.signalCode !== null) return undefined;
      const exited = new Promise((resolve) => w.once('exit', resolve));
      w.kill('SIGTERM');
      const timer = setTimeout(() => w.kill('SIGKILL'), 10_000);
      return exited.then(() => clearTimeout(timer));
    }),
  );
  await engine?.close();
  await gateway.close();
  await db.close();
  await database.drop();
  upstream.close();
  rmSync(home, { recursive: true, force: true });
}

/** Polls `check` every 20 ms until it answers something truthy; throws `message` after `ms`. */
async function until(check, ms, message) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(message);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The version's `mt worker`, resolved once it prints its `executing runs` line (60 s at most). */
function startWorker() {
  const child = spawn(process.execPath, [v.mt, 'worker'], { cwd: home, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`mt worker did not start in 60 s:\n${log}`)), 60_000);
    child.stderr.on('data', (c) => {
      log += c;
      if (/executing runs/.test(log)) {
        clearTimeout(timer);
        resolve(child);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`mt worker exited with ${code}:\n${log}`));
    });
  });
}

/** Which of `pids` holds the TCP connection whose local port is `port`, from /proc (the socket's inode). */
async function pidOfLocalPort(port, pids) {
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  const inodes = new Set();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = await readFile(table, 'utf8').catch(() => '');
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length > 9 && cols[1].endsWith(`:${hex}`)) inodes.add(cols[9]);
    }
  }
  for (const pid of pids) {
    for (const fd of await readdir(`/proc/${pid}/fd`).catch(() => [])) {
      const m = /^socket:\[(\d+)\]$/.exec(await readlink(`/proc/${pid}/fd/${fd}`).catch(() => ''));
      if (m && inodes.has(m[1])) return pid;
    }
  }
  return undefined;
}
