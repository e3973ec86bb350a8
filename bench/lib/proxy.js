// The minimal fastify proxy the call benches compare against (its own process): a JSON body in, one undici request
// with the secret header to the bench's upstream, the upstream's JSON body back in the shape of the gateway's result.
// `Pool` is the undici it forwards with (the repo's, or another version's for bench/undici-proxy-ab.js).
export async function listenProxy({ Pool, upstreamPort, secret, poolOptions = {} }) {
  const { default: Fastify } = await import('fastify');
  const upstream = new Pool(`http://127.0.0.1:${upstreamPort}`, poolOptions);
  const app = Fastify({ logger: false });
  app.post('/call', async (request) => {
    const id = request.body.arguments.additionalInputs['path.orderId'];
    const { statusCode, body } = await upstream.request({
      path: `/orders/${encodeURIComponent(id)}`,
      method: 'GET',
      headers: { 'user-agent': 'proxy', accept: 'application/json', 'x-api-key': secret },
    });
    return { ok: statusCode < 400, status: statusCode, body: await body.json() };
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  process.on('disconnect', () => app.close().then(() => process.exit(0)));
  return app.server.address().port;
}

// The same proxy on node:http alone (no framework): what one more process on the call's path costs at the least,
// the floor under the fastify proxy and `mt serve` (bench/calls-spread.js's `bare` row).
export async function listenBareProxy({ Pool, upstreamPort, secret }) {
  const { createServer } = await import('node:http');
  const upstream = new Pool(`http://127.0.0.1:${upstreamPort}`);
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', async () => {
      const id = JSON.parse(Buffer.concat(chunks).toString()).arguments.additionalInputs['path.orderId'];
      const { statusCode, body } = await upstream.request({
        path: `/orders/${encodeURIComponent(id)}`,
        method: 'GET',
        headers: { 'user-agent': 'proxy', accept: 'application/json', 'x-api-key': secret },
      });
      const reply = JSON.stringify({ ok: statusCode < 400, status: statusCode, body: await body.json() });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(reply) });
      res.end(reply);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  process.on('disconnect', () => server.close(() => process.exit(0)));
  return server.address().port;
}
