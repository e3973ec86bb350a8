import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
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
  /** The client's port on 127.0.0.1, to find the process that sent it. */
  remotePort: number;
}

/** What a handler answers; `hold` keeps the response open until the returned promise settles. */
export type UpstreamHandler = (
  request: UpstreamRequest,
  res: ServerResponse,
  req: IncomingMessage,
) => undefined | Promise<undefined | unknown> | unknown;

/** A real HTTP server on 127.0.0.1 standing in for a tool's upstream API; it records every request. */
export interface Upstream {
  /** `http://127.0.0.1:PORT`. */
  origin: string;
  port: number;
  requests: UpstreamRequest[];
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

/** Starts a recording upstream on 127.0.0.1 that answers with `handler` (by default `{"ok":true}`). */
export async function startRecordingUpstream(handler: UpstreamHandler = answerOk): Promise<Upstream> {
  let current = handler;
  const log = createRequestLog<UpstreamRequest>();
  const sockets = new Set<Socket>();
  const server = createServer(async (req, res) => {
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
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    requests: log.requests,
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
