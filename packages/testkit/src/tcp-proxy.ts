import { connect, createServer, type Socket } from 'node:net';

/**
 * A TCP proxy on 127.0.0.1 in front of a server (PostgreSQL in tests) that can stop forwarding, slow down, drop
 * everything silently or cut, switched at run time: the faults a network brings.
 */
export interface TcpProxy {
  port: number;
  /** `url` (a connection string) with its host and port replaced by the proxy's. */
  via(url: string): string;
  /** Stops forwarding in both directions on every connection, new ones included: they stall, never close. */
  freeze(): void;
  /** Forwards again, first everything held while frozen; ends latency (a black-holed connection stays so). */
  thaw(): void;
  /**
   * Black-holes every connection open now and every one accepted until {@link TcpProxy.forward}: each stays open, and
   * what either side sends is dropped, never delivered and never answered (a half-open connection behind a NAT or a
   * failover). A black-holed connection stays so for good (what it lost cannot be replayed); new ones after
   * `forward()` work. With `'replies'`, only what the server sends is dropped: what the client sends still arrives
   * (a request that is carried out, whose answer is lost).
   */
  blackHole(direction?: 'both' | 'replies'): void;
  /** Delays every chunk, both ways, by `ms` from now on (in order), until {@link TcpProxy.forward}. */
  latency(ms: number): void;
  /** Forwards new connections and live ones at once again (ends freeze, latency and black-hole for new connections). */
  forward(): void;
  /** Closes every open connection (both sides see it dropped); new connections are forwarded as before. */
  cut(): void;
  /**
   * Half-open: every connection open now stays open but silent for good (what a NAT or a failover that forgot it
   * leaves behind: nothing arrives, nothing closes), while new connections are forwarded as before (after a
   * {@link TcpProxy.thaw} if frozen): {@link TcpProxy.blackHole} for the connections open now only.
   */
  blackHoleExisting(): void;
  /** Connections accepted so far. */
  readonly accepted: number;
  /** Connections open now (each counted once, whatever its state). */
  readonly open: number;
  /** Closes the proxy and every connection through it. */
  close(): Promise<void>;
}

interface Pipe {
  held: Buffer[];
  to: Socket;
}

interface Link {
  client: Socket;
  upstream?: Socket;
  /** Drops everything for good. */
  dead: boolean;
  /** Drops what the server sends, for good. */
  deaf: boolean;
}

/**
 * Starts a {@link TcpProxy} to `target` (default PostgreSQL's 127.0.0.1:5432). While frozen it keeps reading
 * and holds what it read, so the peers see a connection that is open and silent, as behind a stalled network.
 */
export async function startTcpProxy(
  target: { host: string; port: number } = { host: '127.0.0.1', port: 5432 },
): Promise<TcpProxy> {
  let frozen = false;
  let holing: 'both' | 'replies' | undefined;
  let delayMs = 0;
  let accepted = 0;
  const pipes: Pipe[] = [];
  const links = new Set<Link>();
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    // A peer that goes away leaves an error on the other side's write; not the proxy's concern.
    socket.on('error', () => {});
  };

  function forward(link: Link, from: Socket, to: Socket): void {
    const pipe: Pipe = { held: [], to };
    pipes.push(pipe);
    const replies = from !== link.client;
    from.on('data', (chunk: Buffer) => {
      if (link.dead || (replies && link.deaf)) return;
      if (frozen) pipe.held.push(chunk);
      else if (delayMs > 0) setTimeout(() => !link.dead && !to.destroyed && to.write(chunk), delayMs);
      else to.write(chunk);
    });
    from.on('close', () => {
      if (!link.dead) to.destroy();
    });
  }

  const server = createServer((client) => {
    accepted++;
    track(client);
    const link: Link = { client, dead: holing === 'both', deaf: holing === 'replies' };
    links.add(link);
    client.on('close', () => links.delete(link));
    // Accepted while black-holed: kept open, read and dropped; never connected on.
    if (link.dead) {
      client.on('data', () => {});
      return;
    }
    const upstream = connect(target.port, target.host);
    link.upstream = upstream;
    track(upstream);
    forward(link, client, upstream);
    forward(link, upstream, client);
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
      delayMs = 0;
      for (const pipe of pipes) {
        for (const chunk of pipe.held.splice(0)) if (!pipe.to.destroyed) pipe.to.write(chunk);
      }
    },
    blackHole(direction = 'both') {
      holing = direction;
      for (const link of links) {
        if (direction === 'both') link.dead = true;
        else link.deaf = true;
      }
      for (const pipe of pipes) pipe.held.length = 0;
    },
    blackHoleExisting() {
      const before = holing;
      proxy.blackHole('both');
      holing = before;
    },
    latency(ms) {
      delayMs = ms;
    },
    forward() {
      holing = undefined;
      proxy.thaw();
    },
    cut() {
      for (const socket of sockets) socket.destroy();
    },
    get accepted() {
      return accepted;
    },
    get open() {
      return links.size;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return proxy;
}
