// A real `mt serve` process for the benches: started on a free port, its log drained and counted, stopped with SIGTERM.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const mt = fileURLToPath(new URL('../../packages/cli/bin/mt.js', import.meta.url));

/**
 * Starts `mt serve` on a free port with `env` added to this process's; resolves with `{ proc, url }` once it prints
 * `listening on`. `nodeArgs`: node flags (profiling). A start longer than BENCH_START_MS (default 180 s: PGlite's
 * start is slow on a loaded machine) ends the process.
 */
export function serve(env, args = [], nodeArgs = []) {
  const proc = spawn(process.execPath, [...nodeArgs, mt, 'serve', '--port', '0', ...args], {
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
