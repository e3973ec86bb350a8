import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

// Linux's ephemeral range (/proc/sys/net/ipv4/ip_local_port_range, 32768-60999 by default): the ports the kernel
// hands to listen(0) and to outgoing connections. A port picked inside it and closed again is soon another socket's.
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 0 ? low : 32768;
  } catch {
    return 32768;
  }
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

function kernelPick(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/**
 * A TCP port free on 127.0.0.1 now, for a server whose address must be known before it starts (MT_PUBLIC_URL, a
 * callback URL, a pooler's or a second PostgreSQL's configuration). Picked at random in the 12,000 ports below the
 * kernel's ephemeral range and checked by binding it: no listen(0) or outgoing connection of any process takes it
 * before the server binds it (a port the kernel picked did, once: `listen EADDRINUSE` in CI on 7 December). Where no
 * such range is free (a low ephemeral range), the kernel's pick.
 */
export async function freePort(): Promise<number> {
  const high = ephemeralLow();
  const low = Math.max(1024, high - 12_000);
  if (high - low >= 1000) {
    for (let attempt = 0; attempt < 50; attempt++) {
      const port = low + Math.floor(Math.random() * (high - low));
      if (await bindable(port)) return port;
    }
  }
  return kernelPick();
}
