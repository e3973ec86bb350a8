// A local OTLP/HTTP collector for the benches' "OpenTelemetry on" rows: node:http on 127.0.0.1, answers 200 to every
// export and counts what it got (requests, bytes). Run it in the bench's own process (`startReceiver`) or in a child
// the bench forks (`node bench/lib/otlp-receiver.js`: it sends `{ port }` to its parent), so its CPU is not charged
// to the process measured.
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';

/** Starts the receiver; resolves with its URL, its counts and `close()`. */
export async function startReceiver() {
  const counts = { requests: 0, bytes: 0 };
  const server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/counts') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(counts));
      return;
    }
    req.on('data', (chunk) => {
      counts.bytes += chunk.length;
    });
    req.on('end', () => {
      counts.requests++;
      res.writeHead(200).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    counts,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** An endpoint nothing listens on (a port just freed): a collector that is down. */
export async function closedPortUrl() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const receiver = await startReceiver();
  process.send?.({ port: Number(new URL(receiver.url).port) });
  process.on('disconnect', () => process.exit(0));
}
