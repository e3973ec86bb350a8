import { connect, createServer, type Socket } from 'node:net';

/** A TCP proxy on 127.0.0.1 in front of a server (PostgreSQL in tests) that can stop forwarding. */
export interface TcpProxy {
  port: number;
  /** `url` (a connection string) with its host and port replaced by the proxy's. */
  via(url: string): string;
  /** Stops forwarding in both directions on every connection, new ones included: they stall, never close. */
  freeze(): void;
  /** Forwards again, first everything held while frozen. */
  thaw(): void;
  /** Closes every open connection (both sides see it dropped); new connections are forwarded as before. */
  cut(): void;
  /**
   * Half-open: every connection open now stays open but silent for good (what a NAT or a failover that forgot it
   * leaves behind: nothing arrives, nothing closes), while new connections are forwarded as before (after a
   * {@link TcpProxy.thaw} if frozen). See {@link blackHole}.
   */
  blackHoleExisting(): void;
  /** Connections accepted so far. */
  readonly accepted: number;
  /** Closes the proxy and every connection through it. */
  close(): Promise<void>;
}

interface Pipe {
  held: Buffer[];
  to: Socket;
  /** Set by {@link blackHole}: what it reads is dropped, never forwarded, and the connection is never closed. */
  blackHoled?: boolean;
}

/** Makes every pipe open now a black hole: its held data dropped, and what it reads from now on too. */
function blackHole(pipes: Pipe[]): void {
  for (const pipe of pipes) {
    pipe.blackHoled = true;
    pipe.held.length = 0;
  }
}

/**
 * Starts a {@link TcpProxy} to `target` (default PostgreSQL's 127.0.0.1:5432). While frozen it keeps reading
 * and holds what it read, so the peers see a connection that is open and silent, as behind a stalled network.
 */
export async function startTcpProxy(
  target: { host: string; port: number } = { host: '127.0.0.1', port: 5432 },
): Promise<TcpProxy> {
  let frozen = false;
  let accepted = 0;
  const pipes: Pipe[] = [];
  const sockets = new Set<Socket>();

  function forward(from: Socket, to: Socket): void {
    const pipe: Pipe = { held: [], to };
    pipes.push(pipe);
    from.on('data', (chunk: Buffer) => {
      if (pipe.blackHoled) return;
      if (frozen) pipe.held.push(chunk);
      else to.write(chunk);
    });
    from.on('close', () => to.destroy());
    from.on('error', () => to.destroy());
  }

  const server = createServer((client) => {
    accepted++;
    const upstream = connect(target.port, target.host);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    }
    forward(client, upstream);
    forward(upstream, client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  const proxy: TcpProxy = {
    port,
    via(url) {
      const parsed = new URL(url);
      parsed.hostname = '127.0.0.1';
      parsed.port = String(port);
      return parsed.toString();
    },
    freeze() {
      frozen = true;
    },
    thaw() {
      frozen = false;
      for (const pipe of pipes) {
        for (const chunk of pipe.held.splice(0)) if (!pipe.to.destroyed) pipe.to.write(chunk);
      }
    },
    cut() {
      for (const socket of sockets) socket.destroy();
    },
    blackHoleExisting() {
      blackHole(pipes);
    },
    get accepted() {
      return accepted;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return proxy;
}
