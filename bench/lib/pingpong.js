// node bench/lib/pingpong.js [same|split] [ms] — the cost of a wake-up on this machine: two processes answering each
// other one byte at a time over a loopback TCP socket (the shape of a call at concurrency 1), pinned with taskset to
// one core (`same`) or to two (`split`: every wake-up crosses cores), or left to the OS (no argument). Prints the round
// trip's p50 and p90 in µs and the cores each side was seen on. Used for docs/performance.md at 3251c0c (bench:calls' spread).
import { execFileSync, fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

if (process.argv[2] === '--echo') {
  const server = createServer((socket) => {
    socket.setNoDelay(true);
    socket.on('data', (chunk) => socket.write(chunk));
  });
  server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
  process.on('disconnect', () => process.exit(0));
} else {
  const mode = process.argv[2];
  const ms = Number(process.argv[3] ?? 2000);
  const echo = fork(fileURLToPath(import.meta.url), ['--echo']);
  const { port } = await new Promise((resolve) => echo.once('message', resolve));
  if (mode === 'same' || mode === 'split') {
    execFileSync('taskset', ['-a', '-p', '-c', '0', String(process.pid)], { stdio: 'ignore' });
    execFileSync('taskset', ['-a', '-p', '-c', mode === 'same' ? '0' : '1', String(echo.pid)], { stdio: 'ignore' });
  }
  const psr = (pid) => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[36];
  const socket = connect(port, '127.0.0.1');
  socket.setNoDelay(true);
  await new Promise((resolve) => socket.once('connect', resolve));
  const times = [];
  const cores = new Set();
  const end = performance.now() + ms;
  let t0 = 0;
  await new Promise((resolve) => {
    const ping = () => {
      t0 = performance.now();
      socket.write('x');
    };
    socket.on('data', () => {
      const now = performance.now();
      times.push((now - t0) * 1000);
      if (times.length % 500 === 0) cores.add(`${psr(process.pid)}${psr(echo.pid)}`);
      if (now < end) ping();
      else resolve();
    });
    ping();
  });
  times.sort((a, b) => a - b);
  const at = (p) => times[Math.floor(p * times.length)].toFixed(0);
  console.log(
    `${mode ?? 'os'}: ${times.length} round trips, p50 ${at(0.5)} µs, p90 ${at(0.9)} µs; cores (this, echo) ${[...cores].join(' ')}`,
  );
  socket.destroy();
  echo.disconnect();
}
