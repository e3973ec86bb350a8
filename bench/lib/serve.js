// A real `mt serve` process for the benches: started on a free port, its log drained and counted, stopped with SIGTERM.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// BENCH_MT: another checkout's `mt` (packages/cli/bin/mt.js, built), to compare servers under the same bench.
const mt = process.env.BENCH_MT ?? fileURLToPath(new URL('../../packages/cli/bin/mt.js', import.meta.url));

/**
 * Starts `mt serve` on a free port with `env` added to this process's; resolves with `{ proc, url }` once it prints
 * `listening on`. `nodeArgs`: node flags (profiling); `mtPath`: another checkout's `mt` (default: BENCH_MT or this one's). A start longer than BENCH_START_MS (default 180 s: PGlite's
 * start is slow on a loaded machine) ends the process.
 */
/** A bench server's environment: a fresh secret key, `adminKey` as the first admin key, 127.0.0.1 allowed, PGlite. */
export function serveEnv(adminKey) {
  return {
    MT_SECRET_KEY: randomBytes(32).toString('hex'),
    MT_BOOTSTRAP_KEY: adminKey,
    MT_EGRESS_ALLOW: '127.0.0.1/32',
    MT_LOG_LEVEL: 'info',
    DATABASE_URL: '',
  };
}

export function serve(env, args = [], nodeArgs = [], mtPath = mt) {
  // BENCH_SERVE_NODE_ARGS: node flags for every bench server (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`).
  const extra = process.env.BENCH_SERVE_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const proc = spawn(process.execPath, [...extra, ...nodeArgs, mtPath, 'serve', '--port', '0', ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => {
        proc.kill('SIGKILL');
        reject(new Error(`mt serve did not start:\n${stderr}`));
      },
      Number(process.env.BENCH_START_MS ?? 180_000),
    );
    proc.stderr.on('data', (chunk) => {
      stderr += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(stderr);
      if (match) {
        clearTimeout(timer);
        proc.stderr.removeAllListeners('data');
        // Keep draining (and counting) what it logs while the bench runs.
        proc.logBytes = 0;
        proc.stderr.on('data', (more) => {
          proc.logBytes += more.length;
        });
        resolve({ proc, url: match[1] });
      }
    });
    proc.once('exit', (code) => reject(new Error(`mt serve exited with ${code}:\n${stderr}`)));
  });
}

/** Stops the process with SIGTERM and waits for its exit. */
export async function stop(proc) {
  if (proc.exitCode !== null) return;
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  proc.kill('SIGTERM');
  await exited;
}

/** CPU time (user + system) a process has used so far, in µs, from /proc (Linux); undefined elsewhere. */
export function cpuMicros(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    // Fields 14 and 15 of stat (utime, stime) in clock ticks of 10 ms.
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return undefined;
  }
}

/** A process's resident set size in MiB (VmRSS of /proc/PID/status, Linux); undefined elsewhere. */
export function rssMiB(pid) {
  try {
    const kib = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kib === undefined ? undefined : Number(kib) / 1024;
  } catch {
    return undefined;
  }
}

/**
 * Deploys bench:calls' tool on `url`: the secret `orders-key` (= `secret`) and `get-order`, a GET of
 * `http://127.0.0.1:{upstreamPort}/orders/{orderId}` sending it as `X-Api-Key`.
 */
export async function deployGetOrder(url, adminKey, upstreamPort, secret) {
  const headers = { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' };
  const created = await fetch(`${url}/v1/secrets`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ name: 'orders-key', value: secret }),
  });
  if (created.status !== 201) throw new Error(`secret: ${created.status} ${await created.text()}`);
  const files = [
    {
      path: 'connectors/open-api/orders-get.mtr',
      content: `method = "GET"
url = "http://127.0.0.1:${upstreamPort}/orders/{orderId}"
description = "One order by its id"
auth = "Header"
parameters.path = [ { name = "orderId" description = "The order id" type = "string" } ]
`,
    },
    {
      path: 'external-operations/open-api/get-order.mtr',
      content: `connector = @ref("orders-get")
guidance = "Looks up an order by its id."
auth = { header = "X-Api-Key" secret = @ref("orders-key") }
`,
    },
  ];
  const deployed = await fetch(`${url}/v1/deploy`, { method: 'POST', headers, body: JSON.stringify({ files }) });
  if (deployed.status !== 200) throw new Error(`deploy: ${deployed.status} ${await deployed.text()}`);
}

/** The deployed `get-order` tool called over REST on an undici `Pool`: the REST target of the MCP benches. */
export async function restGetOrder(pool, headers, body) {
  const { statusCode, body: answer } = await pool.request({
    path: '/v1/extops/get-order/call',
    method: 'POST',
    headers,
    body,
  });
  const value = await answer.json();
  if (statusCode !== 200 || !value.ok) throw new Error('REST call failed');
}

/** The same tool through the MCP SDK `Client`'s `callTool`: the MCP target of the MCP benches. */
export async function sdkGetOrder(client, params) {
  const result = await client.callTool(params);
  if (result.isError) throw new Error(`MCP call failed: ${JSON.stringify(result.content)}`);
}
