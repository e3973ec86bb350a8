import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { createRequestLog } from './request-log.js';

/** One request a test upstream received. */
export interface UpstreamRequest {
  method: string;
  /** Path and query as sent. */
  url: string;
  headers: IncomingHttpHeaders;
  /** The body as text ('' when none). */
  body: string;
  /** The client's port, to find the process that sent it. */
  remotePort: number;
}

/** What a handler answers; `hold` keeps the response open until the returned promise settles. */
export type UpstreamHandler = (
  request: UpstreamRequest,
  res: ServerResponse,
  req: IncomingMessage,
) => undefined | Promise<undefined | unknown> | unknown;

/** A real HTTP server on a loopback address standing in for a tool's upstream API; it records every request. */
export interface Upstream {
  /** `http://127.0.0.1:PORT` (`https://` with `tls`, the `host` given). */
  origin: string;
  host: string;
  port: number;
  requests: UpstreamRequest[];
  /** How many connections clients have opened to it. */
  readonly connections: number;
  /** Replaces the handler. */
  setHandler(handler: UpstreamHandler): void;
  /** Resolves with the first request that matches, waiting for it. */
  waitFor(match: (r: UpstreamRequest) => boolean, timeoutMs?: number): Promise<UpstreamRequest>;
  close(): Promise<void>;
}

/** Answers `{"ok":true}` as JSON. */
function answerOk(_request: UpstreamRequest, res: ServerResponse): void {
  res.setHeader('content-type', 'application/json');
  res.end('{"ok":true}');
}

/** Where a recording upstream listens: `host` (default 127.0.0.1), and HTTPS with `tls`'s key and certificate. */
export interface UpstreamOptions {
  host?: string;
  tls?: { key: string; cert: string };
}

/** Starts a recording upstream on 127.0.0.1 that answers with `handler` (by default `{"ok":true}`). */
export async function startRecordingUpstream(
  handler: UpstreamHandler = answerOk,
  options: UpstreamOptions = {},
): Promise<Upstream> {
  const host = options.host ?? '127.0.0.1';
  let current = handler;
  let connections = 0;
  const log = createRequestLog<UpstreamRequest>();
  const sockets = new Set<Socket>();
  const listener = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const request: UpstreamRequest = {
      method: req.method ?? '',
      url: req.url ?? '',
      headers: req.headers,
      body: Buffer.concat(chunks).toString('utf8'),
      remotePort: req.socket.remotePort ?? 0,
    };
    log.push(request);
    try {
      await current(request, res, req);
    } catch {
      if (!res.headersSent) res.statusCode = 500;
      res.end();
    }
  };
  const server = options.tls ? createTlsServer(options.tls, listener) : createServer(listener);
  server.on('connection', (s: Socket) => {
    connections++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `${options.tls ? 'https' : 'http'}://${host}:${port}`,
    host,
    port,
    requests: log.requests,
    get connections() {
      return connections;
    },
    setHandler: (h) => {
      current = h;
    },
    waitFor: (match, timeoutMs = 20_000) =>
      log.waitFor(
        match,
        timeoutMs,
        () =>
          `upstream: no matching request in ${timeoutMs} ms; saw ${JSON.stringify(log.requests.map((r) => `${r.method} ${r.url}`))}`,
      ),
    close: async () => {
      const closed = new Promise((resolve) => server.close(resolve));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}
