import { connect, createServer, type Socket } from 'node:net';

/** A TCP proxy on 127.0.0.1 in front of another address, that a test can freeze. */
export interface TcpProxy {
  /** `url` (the target's, with any path: a database name, say) with its host and port replaced by the proxy's. */
  through(url: string): string;
  /** Stops forwarding in both directions: open connections stall, new ones are accepted and then stall too. */
  freeze(): void;
  /** Forwards again (what was held back while frozen is sent on). */
  resume(): void;
  /** Closes the proxy and every connection through it. */
  close(): Promise<void>;
}

/**
 * Starts a TCP proxy on 127.0.0.1 to the host and port of `url` (a `postgres://` URL, say): a stalled network
 * between a process and its database, for tests.
 */
export async function startTcpProxy(url: string): Promise<TcpProxy> {
  const target = new URL(url);
  const sockets = new Set<Socket>();
  let frozen = false;
  const pairs = new Set<[Socket, Socket]>();
  const server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    client.on('close', () => pairs.delete(pair));
    if (frozen) {
      client.pause();
      upstream.pause();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    through(other) {
      const proxied = new URL(other);
      proxied.hostname = '127.0.0.1';
      proxied.port = String(port);
      return proxied.toString();
    },
    freeze() {
      frozen = true;
      for (const [a, b] of pairs) {
        // Unpiped and paused: nothing read is passed on until resume.
        a.unpipe(b);
        b.unpipe(a);
        a.pause();
        b.pause();
      }
    },
    resume() {
      frozen = false;
      for (const [a, b] of pairs) {
        a.pipe(b);
        b.pipe(a);
      }
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
