// `mt serve`'s start, alternately for each tree given (default: this one): the CPU the process used (user + system,
// all threads, from /proc) and the wall time until it printed "listening on", on a PostgreSQL database it migrated
// once before (the first start of each round-robin is dropped). Usage:
//   node bench/serve-start-ab.js /work/wt-before /work/wt-suite      (ROUNDS=6 by default; MT_TEST_PG_URL's server)
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const trees = process.argv.length > 2 ? process.argv.slice(2) : [fileURLToPath(new URL('..', import.meta.url))];
const server = process.env.MT_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const name = `mt_bench_serve_start_${randomBytes(4).toString('hex')}`;
const admin = new pg.Client({ connectionString: server });
await admin.connect();
await admin.query(`CREATE DATABASE "${name}"`);
const url = new URL(server);
url.pathname = `/${name}`;
const env = {
  ...process.env,
  DATABASE_URL: url.toString(),
  MT_SECRET_KEY: randomBytes(32).toString('hex'),
  MT_BOOTSTRAP_KEY: `mt_bench_${randomBytes(18).toString('hex')}`,
};
const results = Object.fromEntries(trees.map((tree) => [tree, { cpu: [], wall: [] }]));
try {
  for (let round = 0; round < Number(process.env.ROUNDS ?? 6); round++) {
    for (const tree of trees) {
      const begin = performance.now();
      const child = spawn(process.execPath, [`${tree}/packages/cli/bin/mt.js`, 'serve', '--port', '0'], { env });
      let log = '';
      await new Promise((resolve, reject) => {
        child.stderr.on('data', (chunk) => {
          log += chunk;
          if (/listening on/.test(log)) resolve();
        });
        child.once('exit', (code) => reject(new Error(`mt serve exited with ${code}:\n${log}`)));
      });
      const wall = performance.now() - begin;
      const stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1].split(' ');
      const cpu = (Number(stat[11]) + Number(stat[12])) * 10; // utime + stime, in 10 ms ticks
      child.removeAllListeners('exit');
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
      if (round > 0) {
        results[tree].cpu.push(cpu);
        results[tree].wall.push(Math.round(wall));
      }
    }
  }
} finally {
  await admin.query(`DROP DATABASE "${name}" WITH (FORCE)`);
  await admin.end();
}
const median = (values) => [...values].sort((a, b) => a - b)[values.length >> 1];
for (const tree of trees) {
  const { cpu, wall } = results[tree];
  console.log(
    `${tree}: CPU median ${median(cpu)} ms (${cpu.join(', ')}), wall median ${median(wall)} ms (${wall.join(', ')})`,
  );
}
