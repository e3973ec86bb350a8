import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';

/** One request as the test server received it. */
export interface Received {
  method: string;
  /** Path and query exactly as sent. */
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** The port of the server that received it. */
  port: number;
}

/** A test server on a loopback address that records every request and connection. */
export interface Upstream {
  port: number;
  host: string;
  origin: string;
  received: Received[];
  connections: number;
  close(): Promise<void>;
}

export type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void | Promise<void>;

/** Starts an HTTP (or, with `tls`, HTTPS) server on `host` (127.0.0.1 by default) on a free port. */
export async function startUpstream(
  handler: Handler,
  options: { host?: string; tls?: { key: string; cert: string } } = {},
): Promise<Upstream> {
  const host = options.host ?? '127.0.0.1';
  const sockets = new Set<Socket>();
  const upstream = { received: [] as Received[], connections: 0 } as Upstream;
  const listener = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      upstream.received.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body,
        port: upstream.port,
      });
      Promise.resolve(handler(req, res, body)).catch((error: unknown) => {
        res.statusCode = 500;
        res.end(String(error));
      });
    });
  };
  const server: Server = options.tls ? createHttpsServer(options.tls, listener) : createHttpServer(listener);
  server.on('connection', (socket: Socket) => {
    upstream.connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('secureConnection', () => {});
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  upstream.port = (server.address() as AddressInfo).port;
  upstream.host = host;
  upstream.origin = `${options.tls ? 'https' : 'http'}://${host}:${upstream.port}`;
  upstream.close = async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return upstream;
}

/** Answers with JSON. */
export function json(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(value));
}
