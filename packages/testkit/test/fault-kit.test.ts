import { connect, createServer, type Server, type Socket } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, holdLock, startTcpProxy, type TcpProxy, type TestDatabase } from '../src/index.js';

// The fault kit against real sockets: an echo server on 127.0.0.1 behind the proxy, and a real PostgreSQL for the
// lock holder.
let echo: Server;
let echoPort: number;

beforeAll(async () => {
  echo = createServer((socket) => {
    socket.on('error', () => {});
    socket.pipe(socket);
  });
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
  echoPort = (echo.address() as { port: number }).port;
});

afterAll(async () => {
  await new Promise<void>((resolve) => echo.close(() => resolve()));
});

/** A connection through `proxy` that records what comes back and whether it closed. */
async function dial(proxy: TcpProxy) {
  const socket: Socket = connect(proxy.port, '127.0.0.1');
  socket.on('error', () => {});
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  let received = '';
  let closed = false;
  socket.on('data', (chunk: Buffer) => {
    received += chunk.toString();
  });
  socket.on('close', () => {
    closed = true;
  });
  return {
    socket,
    get received() {
      return received;
    },
    get closed() {
      return closed;
    },
    /** Sends `text` and resolves with the ms until all of it came back, or rejects after `ms`. */
    echo(text: string, ms = 2000): Promise<number> {
      const began = performance.now();
      const start = received.length;
      socket.write(text);
      return new Promise((resolve, reject) => {
        const deadline = setTimeout(() => reject(new Error(`no echo of ${text} in ${ms} ms`)), ms);
        const check = () => {
          if (received.slice(start).includes(text)) {
            clearTimeout(deadline);
            socket.off('data', check);
            resolve(performance.now() - began);
          }
        };
        socket.on('data', check);
      });
    },
  };
}

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('startTcpProxy', () => {
  it('black-hole: keeps old and new connections open and silent for good; new ones after forward() work', async () => {
    const proxy = await startTcpProxy({ host: '127.0.0.1', port: echoPort });
    try {
      const before = await dial(proxy);
      expect(await before.echo('one')).toBeLessThan(1000);
      proxy.blackHole();
      const during = await dial(proxy);
      before.socket.write('lost');
      during.socket.write('lost too');
      await wait(300);
      expect(before.received).toBe('one');
      expect(during.received).toBe('');
      expect([before.closed, during.closed]).toEqual([false, false]);
      proxy.forward();
      // What was black-holed stays so (its bytes are gone); a new connection is forwarded.
      before.socket.write('after');
      await wait(200);
      expect(before.received).toBe('one');
      const after = await dial(proxy);
      expect(await after.echo('fresh')).toBeLessThan(1000);
      expect(proxy.open).toBe(3);
    } finally {
      await proxy.close();
    }
  });

  it("black-hole of 'replies': what the client sends arrives, what the server sends is dropped", async () => {
    let arrived = '';
    const sink = createServer((socket) => {
      socket.on('error', () => {});
      socket.on('data', (chunk: Buffer) => {
        arrived += chunk.toString();
        socket.write(chunk);
      });
    });
    await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
    const proxy = await startTcpProxy({ host: '127.0.0.1', port: (sink.address() as { port: number }).port });
    try {
      const link = await dial(proxy);
      await link.echo('before');
      proxy.blackHole('replies');
      link.socket.write('carried out');
      await wait(300);
      expect(arrived).toBe('beforecarried out');
      expect(link.received).toBe('before');
      expect(link.closed).toBe(false);
    } finally {
      await proxy.close();
      await new Promise<void>((resolve) => sink.close(() => resolve()));
    }
  });

  it('latency: delays each chunk by the given ms each way, in order, until forward()', async () => {
    const proxy = await startTcpProxy({ host: '127.0.0.1', port: echoPort });
    try {
      const link = await dial(proxy);
      proxy.latency(150);
      // Both ways: at least 300 ms for the round trip.
      expect(await link.echo('slow')).toBeGreaterThanOrEqual(290);
      link.socket.write('a');
      link.socket.write('b');
      await link.echo('c');
      expect(link.received).toBe('slowabc');
      proxy.forward();
      expect(await link.echo('quick')).toBeLessThan(150);
    } finally {
      await proxy.close();
    }
  });

  it('cut: closes every open connection at once; new ones are forwarded', async () => {
    const proxy = await startTcpProxy({ host: '127.0.0.1', port: echoPort });
    try {
      const links = [await dial(proxy), await dial(proxy)];
      proxy.cut();
      await wait(100);
      expect(links.map((l) => l.closed)).toEqual([true, true]);
      expect(await (await dial(proxy)).echo('again')).toBeLessThan(1000);
      expect(proxy.accepted).toBe(3);
    } finally {
      await proxy.close();
    }
  });

  it('freeze/thaw: holds what was sent and delivers it on thaw', async () => {
    const proxy = await startTcpProxy({ host: '127.0.0.1', port: echoPort });
    try {
      const link = await dial(proxy);
      proxy.freeze();
      const echoed = link.echo('held', 3000);
      await wait(200);
      expect(link.received).toBe('');
      proxy.thaw();
      await echoed;
      expect(link.received).toBe('held');
    } finally {
      await proxy.close();
    }
  });
});

describe('holdLock', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase('mt_fault_kit');
  });
  afterAll(async () => {
    await database?.drop();
  });

  it('makes a write to the table wait until it is released, which happens on its own after the time given', async () => {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      await client.query('CREATE TABLE locked (n int)');
      const held = await holdLock(database.url, 'locked', 600);
      const began = performance.now();
      await client.query('INSERT INTO locked VALUES (1)');
      const waited = performance.now() - began;
      expect(waited).toBeGreaterThanOrEqual(450);
      expect(waited).toBeLessThan(3000);
      await held.released;
      // Released early: the next lock is free at once.
      const early = await holdLock(database.url, 'locked', 60_000);
      await early.release();
      await early.released;
      const again = performance.now();
      await client.query('INSERT INTO locked VALUES (2)');
      expect(performance.now() - again).toBeLessThan(400);
      expect((await client.query('SELECT count(*)::int AS n FROM locked')).rows[0].n).toBe(2);
    } finally {
      await client.end();
    }
  });
});
