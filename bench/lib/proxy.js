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
