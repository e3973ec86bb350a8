// node bench/undici-proxy-ab.js OTHER_PREFIX — issue #27's question: is the minimal fastify proxy of `npm run
// bench:calls` slower with the repo's undici than with another one (e.g. `npm install undici@7 --prefix /tmp/u7`,
// then OTHER_PREFIX=/tmp/u7)? Starts the bench's upstream and two proxies (the same code as bench:calls' `--proxy`,
// one on each undici), then drives both from one client in alternating rounds, and prints calls/s, p50 and the
// proxy process's CPU a call (user + system, from /proc). Nothing is written. BENCH_CONCURRENCY (default 1),
// BENCH_ROUNDS (10), BENCH_ROUND_MS (600); a third proxy on the repo's undici with `allowH2: false` is added with
// BENCH_NO_H2=1.
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { percentile } from './lib/measure.js';
import { listenProxy } from './lib/proxy.js';
import { cpuMicros } from './lib/serve.js';

const SECRET = 'bench-secret-value';
const self = fileURLToPath(import.meta.url);
const root = fileURLToPath(new URL('..', import.meta.url));

if (process.argv[2] === '--proxy') {
  const [, , , prefix, port, variant] = process.argv;
  const { Pool: ProxyPool, VERSION } = loadUndici(prefix);
  const poolOptions = variant === 'no-h2' ? { allowH2: false } : {};
  const proxyPort = await listenProxy({ Pool: ProxyPool, upstreamPort: port, secret: SECRET, poolOptions });
  process.send?.({ port: proxyPort, version: VERSION ?? versionOf(prefix) });
} else {
  await main();
}

function loadUndici(prefix) {
  return createRequire(`${prefix}/package.json`)('undici');
}

function versionOf(prefix) {
  const require = createRequire(`${prefix}/package.json`);
  return JSON.parse(readFileSync(require.resolve('undici/package.json'), 'utf8')).version;
}

function child(script, args) {
  const proc = fork(script, args, { stdio: 'inherit' });
  return new Promise((resolve) => proc.once('message', (m) => resolve({ proc, ...m })));
}

async function main() {
  const other = process.argv[2];
  if (!other) throw new Error('usage: node bench/undici-proxy-ab.js OTHER_PREFIX (a folder with node_modules/undici)');
  const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 1);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 10);
  const roundMs = Number(process.env.BENCH_ROUND_MS ?? 600);
  const upstream = await child(fileURLToPath(new URL('./calls.bench.js', import.meta.url)), ['--upstream']);
  const port = String(upstream.port);
  const proxies = [
    { name: 'repo undici', ...(await child(self, ['--proxy', root, port])) },
    { name: 'other undici', ...(await child(self, ['--proxy', other, port])) },
  ];
  if (process.env.BENCH_NO_H2 === '1')
    proxies.push({ name: 'repo undici, allowH2 false', ...(await child(self, ['--proxy', root, port, 'no-h2'])) });
  const body = JSON.stringify({ arguments: { additionalInputs: { 'path.orderId': 'A-1001' } } });
  for (const proxy of proxies) {
    const pool = new Pool(`http://127.0.0.1:${proxy.port}`);
    proxy.pool = pool;
    proxy.latencies = [];
    proxy.calls = 0;
    proxy.cpu = 0;
    proxy.seconds = 0;
    proxy.call = async () => {
      const res = await pool.request({
        path: '/call',
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      if (!(await res.body.json()).ok) throw new Error('proxy call failed');
    };
  }
  const drive = async (proxy, ms, keep) => {
    const end = performance.now() + ms;
    const cpu0 = cpuMicros(proxy.proc.pid);
    const began = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (performance.now() < end) {
          const t0 = performance.now();
          await proxy.call();
          if (keep) {
            proxy.latencies.push((performance.now() - t0) * 1000);
            proxy.calls++;
          }
        }
      }),
    );
    if (keep) {
      proxy.cpu += cpuMicros(proxy.proc.pid) - cpu0;
      proxy.seconds += (performance.now() - began) / 1000;
    }
  };
  for (const proxy of proxies) await drive(proxy, 500, false);
  for (let round = 0; round < rounds; round++) {
    // Alternating order, so a change of the machine's load weighs on both alike.
    const order = round % 2 === 0 ? proxies : [...proxies].reverse();
    for (const proxy of order) await drive(proxy, roundMs, true);
  }
  for (const proxy of proxies) {
    const sorted = proxy.latencies.sort((a, b) => a - b);
    console.log(
      `${proxy.name} (undici ${proxy.version}), c=${concurrency}: ${(proxy.calls / proxy.seconds).toFixed(0)}/s, ` +
        `p50 ${percentile(sorted, 50).toFixed(0)} µs, proxy CPU ${(proxy.cpu / proxy.calls).toFixed(0)} µs a call (${proxy.calls} calls)`,
    );
    await proxy.pool.close();
    proxy.proc.disconnect();
  }
  upstream.proc.disconnect();
  console.log(
    `load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
}
