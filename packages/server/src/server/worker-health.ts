import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Readiness, type ReadinessInputs, readiness } from '../routes/health.js';

/** `mt worker`'s health port: the routes of `mt serve`'s, `GET /health` (readiness) and `GET /health/live`. */
export interface WorkerHealthServer {
  /** `http://host:port`. */
  url: string;
  close(): Promise<void>;
}

/**
 * Answers `GET /health` (and `GET /health/ready`, the same) with {@link readiness} of `inputs()` (200, or 503 with the reason) and `GET /health/live` with
 * 200 while the process turns, on `host:port` (docs/operations.md, "Shutdown" and "Health"); anything else is 404.
 */
export async function startWorkerHealth(
  listen: { host: string; port: number },
  inputs: () => ReadinessInputs,
): Promise<WorkerHealthServer> {
  const send = (res: import('node:http').ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
    res.end(JSON.stringify(body));
  };
  const server = createHttpServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, { status: 'method not allowed' });
    if (path === '/health/live') return send(res, 200, { status: 'ok' });
    if (path !== '/health' && path !== '/health/ready') return send(res, 404, { status: 'not found' });
    readiness(inputs()).then(
      (answer: Readiness) => send(res, answer.status === 'ok' ? 200 : 503, answer),
      () => send(res, 500, { status: 'error', reason: 'readiness could not be read' }),
    );
  });
  // A probe's connection is not kept open: nothing waits on an idle one at close.
  server.keepAliveTimeout = 1000;
  server.requestTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = listen.host.includes(':') ? `[${listen.host}]` : listen.host;
  return {
    url: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
