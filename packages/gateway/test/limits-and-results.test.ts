import { brotliCompressSync, gzipSync } from 'node:zlib';
import { createEgressPolicy } from '@maitento/egress';
import { createGateway, type Gateway, toolResultText } from '@maitento/gateway';
import type { Connector, Tool } from '@maitento/lang';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRecordingUpstream, type Upstream } from '@maitento/testkit';
import { json } from './helpers/upstream.js';

const big = 'x'.repeat(300_000);
const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024));
let upstream: Upstream;
let gateway: Gateway;
let quick: Gateway;
// When each slow path's request reached the upstream. The calls are timed from then: the time before, the gateway's
// first use in this file, took 4 s at load 23 and is not the deadline's.
const arrived = new Map<string, number>();

beforeAll(async () => {
  upstream = await startRecordingUpstream((req, res) => {
    const { body } = req;
    const url = new URL(req.url ?? '/', 'http://x');
    switch (url.pathname) {
      case '/slow-headers':
        arrived.set(url.pathname, Date.now());
        setTimeout(() => json(res, 200, { late: true }), 6_000);
        return;
      case '/slow-body':
        arrived.set(url.pathname, Date.now());
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"partial":');
        setTimeout(() => res.end('true}'), 6_000);
        return;
      case '/big':
        res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(big.length) });
        res.end(big);
        return;
      case '/gzip':
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
        res.end(gzipSync(JSON.stringify({ compressed: 'gzip' })));
        return;
      case '/br':
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'br' });
        res.end(brotliCompressSync(JSON.stringify({ compressed: 'br' })));
        return;
      case '/bomb':
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-encoding': 'gzip' });
        res.end(bomb);
        return;
      case '/corrupt':
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
        res.end('not gzip at all');
        return;
      case '/missing':
        json(res, 404, { error: 'no such order' });
        return;
      case '/hops': {
        const left = Number(url.searchParams.get('n'));
        if (left > 0) {
          res.writeHead(302, { location: `/hops?n=${left - 1}` });
          res.end();
        } else json(res, 200, { arrived: true });
        return;
      }
      case '/echo':
        json(res, 200, { headers: req.headers, body, url: req.url }, { 'x-echo': String(req.headers['x-api-key']) });
        return;
      case '/leak-redirect':
        res.writeHead(302, { location: `/echo?k=${encodeURIComponent(String(req.headers['x-api-key']))}` });
        res.end();
        return;
      case '/see-other':
        res.writeHead(303, { location: '/echo' });
        res.end();
        return;
      case '/temporary':
        res.writeHead(307, { location: '/echo' });
        res.end();
        return;
      case '/order':
        json(res, 200, { id: 'A-1', total: url.searchParams.get('total') === 'bad' ? 'twelve' : 12 });
        return;
      default:
        json(res, 200, { path: url.pathname });
    }
  });
  const policy = createEgressPolicy({ allow: '127.0.0.1/32' });
  gateway = createGateway({ policy });
  // 1.5 s: at load 22 a 0.3 s deadline ran out before the request reached the endpoint.
  quick = createGateway({ policy, timeoutMs: 1_500 });
  // Once before the deadline's tests, so what they time is the call's own work (its result does not matter).
  await quick.call({ tool, connector: connector('/warm'), arguments: {} });
});

afterAll(async () => {
  await gateway.close();
  await quick.close();
  await upstream.close();
});

function connector(path: string, extra: Partial<Connector> = {}): Connector {
  return {
    kind: 'connector',
    name: 'test-endpoint',
    method: 'GET',
    url: `${upstream.origin}${path}`,
    description: 'test',
    parameters: { path: [], query: [] },
    schema: {},
    auth: 'None',
    ...extra,
  };
}

const tool: Tool = {
  kind: 'tool',
  name: 'test-tool',
  connector: 'test-endpoint',
  guidance: 'test',
  bindings: { request: {}, query: {}, path: {} },
  requiresApproval: false,
};

const refundSchema = {
  request: {
    type: 'object',
    properties: { amount: { type: 'number' }, reason: { type: 'string' } },
    required: ['amount', 'reason'],
    additionalProperties: false,
  },
};

describe('the deadline', () => {
  it('stops a call whose headers do not come in time', async () => {
    const result = await quick.call({ tool, connector: connector('/slow-headers'), arguments: {} });
    expect(result).toMatchObject({ ok: false, code: 'api:gateway:timeout' });
    expect(result.error).toBe('The endpoint of test-tool did not answer within 1.5 seconds.');
    // The request reached the endpoint, and the call ended long before its answer (6 s after that).
    expect(arrived.has('/slow-headers')).toBe(true);
    expect(Date.now() - arrived.get('/slow-headers')!).toBeLessThan(4_500);
  });

  it('also covers reading the body', async () => {
    const result = await quick.call({ tool, connector: connector('/slow-body'), arguments: {} });
    expect(result).toMatchObject({ ok: false, code: 'api:gateway:timeout' });
    expect(arrived.has('/slow-body')).toBe(true);
    expect(Date.now() - arrived.get('/slow-body')!).toBeLessThan(4_500);
  });
});

describe('the deadline before sending', () => {
  it('also bounds a name lookup that never answers', async () => {
    const hanging = createGateway({
      policy: createEgressPolicy({ allow: '127.0.0.1/32' }),
      resolver: () => new Promise(() => {}),
      timeoutMs: 200,
    });
    try {
      const started = Date.now();
      const result = await hanging.call({
        tool,
        connector: { ...connector('/x'), url: `http://slow-dns.example.com:${upstream.port}/x` },
        arguments: {},
      });
      expect(result).toMatchObject({ ok: false, code: 'api:gateway:timeout' });
      expect(Date.now() - started).toBeLessThan(2_000);
    } finally {
      await hanging.close();
    }
  });

  it('reports a call cancelled by the caller', async () => {
    const controller = new AbortController();
    const pending = gateway.call({
      tool,
      connector: connector('/slow-headers'),
      arguments: {},
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(), 50);
    expect(await pending).toMatchObject({ ok: false, code: 'api:gateway:cancelled' });
  });
});

describe('the body', () => {
  it('is cut at 100,000 decoded bytes by default, and the model is told how large it was', async () => {
    const result = await gateway.call({ tool, connector: connector('/big'), arguments: {} });
    expect(result.ok).toBe(true);
    expect(result.truncated).toEqual({ limit: 100_000, size: 300_000 });
    expect((result.body as string).length).toBe(100_000);
    expect(toolResultText(result)).toMatch(
      /^\[The response was cut at 100000 bytes; the whole response was 300000 bytes\.\]\n/,
    );
  });

  it('is decompressed from gzip and br', async () => {
    const gz = await gateway.call({ tool, connector: connector('/gzip'), arguments: {} });
    expect(gz).toMatchObject({ ok: true, body: { compressed: 'gzip' } });
    const br = await gateway.call({ tool, connector: connector('/br'), arguments: {} });
    expect(br).toMatchObject({ ok: true, body: { compressed: 'br' } });
  });

  it('stops decoding a decompression bomb at the limit', async () => {
    const before = process.memoryUsage().rss;
    const result = await gateway.call({ tool, connector: connector('/bomb'), arguments: {} });
    expect(result.ok).toBe(true);
    expect(result.truncated).toEqual({ limit: 100_000 });
    expect((result.body as string).length).toBe(100_000);
    // 64 MiB inflated would show; the cap keeps the growth to a few chunks.
    expect(process.memoryUsage().rss - before).toBeLessThan(48 * 1024 * 1024);
  });

  it('reports a body that cannot be decoded', async () => {
    const result = await gateway.call({ tool, connector: connector('/corrupt'), arguments: {} });
    expect(result).toMatchObject({ ok: false, code: 'api:gateway:response-undecodable' });
  });
});

describe('statuses and redirects', () => {
  it('gives any non-2xx status as an error with the status and the body', async () => {
    const result = await gateway.call({ tool, connector: connector('/missing'), arguments: {} });
    expect(result).toMatchObject({
      ok: false,
      status: 404,
      body: { error: 'no such order' },
      code: 'api:gateway:upstream-status',
      error: 'The endpoint of test-tool answered with HTTP status 404.',
    });
  });

  it('follows five redirects and refuses the sixth', async () => {
    const five = await gateway.call({ tool, connector: connector('/hops?n=5'), arguments: {} });
    expect(five).toMatchObject({ ok: true, body: { arrived: true } });
    const before = upstream.requests.length;
    const six = await gateway.call({ tool, connector: connector('/hops?n=6'), arguments: {} });
    expect(six).toMatchObject({ ok: false, code: 'api:gateway:too-many-redirects' });
    expect(upstream.requests.length - before).toBe(6);
  });

  it('turns a POST into a GET without body on 303, and keeps method and body on 307', async () => {
    const post = (path: string) =>
      gateway.call({
        tool,
        connector: connector(path, { method: 'POST', schema: refundSchema }),
        arguments: { request: { amount: 1, reason: 'r' } },
        idempotencyKey: 'run/call',
      });
    const other = await post('/see-other');
    expect(other.body).toMatchObject({ body: '' });
    expect(upstream.requests.at(-1)).toMatchObject({ method: 'GET', body: '' });
    expect(upstream.requests.at(-1)?.headers['content-type']).toBeUndefined();
    const before = upstream.requests.length;
    const kept = await post('/temporary');
    // Both hops of this one call, so the two keys compared below come from the same call's two requests.
    expect(upstream.requests.slice(before).map((r) => r.url)).toEqual(['/temporary', '/echo']);
    expect(upstream.requests.at(-1)).toMatchObject({ method: 'POST', body: '{"amount":1,"reason":"r"}' });
    expect(upstream.requests.at(-2)?.headers['idempotency-key']).toMatch(/^mt-[A-Za-z0-9_-]{32}$/);
    expect(upstream.requests.at(-1)?.headers['idempotency-key']).toBe(
      upstream.requests.at(-2)?.headers['idempotency-key'],
    );
    expect(kept.ok).toBe(true);
  });
});

describe('schemas', () => {
  it('refuses a body that does not match schema.request, lists what is wrong, and never reaches the endpoint', async () => {
    const before = upstream.requests.length;
    const result = await gateway.call({
      tool,
      connector: connector('/refund', { method: 'POST', schema: refundSchema }),
      arguments: { request: { amount: 'twelve' } },
    });
    expect(result).toEqual({
      ok: false,
      code: 'api:gateway:request-invalid',
      error:
        'The call to test-tool was not sent because its arguments do not match: request.reason is required; request.amount must be number',
    });
    expect(upstream.requests.length).toBe(before);
  });

  it('checks typed and required query parameters before sending', async () => {
    const before = upstream.requests.length;
    const result = await gateway.call({
      tool,
      connector: connector('/typed', {
        parameters: {
          path: [],
          query: [
            { name: 'limit', type: 'integer', required: true },
            { name: 'ratio', type: 'number', required: false },
            { name: 'flag', type: 'boolean', required: false },
          ],
        },
      }),
      arguments: { additionalInputs: { 'query.ratio': 'lots', 'query.flag': 'yes' } },
    });
    expect(result.code).toBe('api:gateway:request-invalid');
    expect(result.error).toContain(
      'query.limit is required; query.ratio must be a number; query.flag must be true or false',
    );
    expect(upstream.requests.length).toBe(before);
  });

  it('sends no body without schema.request, even for a POST', async () => {
    const result = await gateway.call({ tool, connector: connector('/echo', { method: 'POST' }), arguments: {} });
    expect(result.ok).toBe(true);
    expect(upstream.requests.at(-1)).toMatchObject({ method: 'POST', body: '' });
    expect(upstream.requests.at(-1)?.headers['content-type']).toBeUndefined();
  });

  it('checks the response against schema.response', async () => {
    const schema = {
      response: { type: 'object', properties: { total: { type: 'number' } }, required: ['total'] },
    };
    const good = await gateway.call({ tool, connector: connector('/order', { schema }), arguments: {} });
    expect(good).toMatchObject({ ok: true, body: { id: 'A-1', total: 12 } });
    const bad = await gateway.call({ tool, connector: connector('/order?total=bad', { schema }), arguments: {} });
    expect(bad).toMatchObject({ ok: false, status: 200, code: 'api:gateway:response-invalid' });
    expect(bad.error).toContain('response.total must be number');
  });
});

describe('secrets and idempotency', () => {
  const secretTool: Tool = { ...tool, auth: { header: 'X-Api-Key', secret: 'k' } };
  const secret = 'sk live/abc+123';

  it('replaces the secret in a body, headers and a redirect URL that echo it', async () => {
    const result = await gateway.call({
      tool: secretTool,
      connector: connector('/leak-redirect', { auth: 'Header' }),
      arguments: {},
      credential: { header: 'X-Api-Key', value: secret },
    });
    expect(result.ok).toBe(true);
    const text = JSON.stringify(result);
    expect(text).not.toContain('sk live');
    expect(text).not.toContain(encodeURIComponent(secret));
    expect(result.headers?.['x-echo']).toBe('[secret]');
    expect(result.body).toMatchObject({ url: '/echo?k=[secret]' });
  });

  it('masks the Bearer form of an Authorization credential in the body', async () => {
    const result = await gateway.call({
      tool: { ...tool, auth: { header: 'Authorization', secret: 'k' } },
      connector: connector('/echo', { auth: 'Header' }),
      arguments: {},
      credential: { header: 'Authorization', value: 'tok123' },
    });
    expect(result.body).toMatchObject({ headers: { authorization: 'Bearer [secret]' } });
    expect(JSON.stringify(result)).not.toContain('tok123');
  });

  it('sends the same Idempotency-Key for a retried call, another for another call, none for a GET', async () => {
    const post = (key: string) =>
      gateway.call({
        tool,
        connector: connector('/echo', { method: 'POST', schema: refundSchema }),
        arguments: { request: { amount: 1, reason: 'r' } },
        idempotencyKey: key,
      });
    // Each key is read from the request that call made: a call that sent nothing would fail here, not read the
    // previous call's request again.
    const sent = async (key: string) => {
      const before = upstream.requests.length;
      expect((await post(key)).ok, key).toBe(true);
      expect(upstream.requests.length, key).toBe(before + 1);
      return upstream.requests.at(-1)?.headers['idempotency-key'];
    };
    const first = await sent('run-1:call-1');
    const retry = await sent('run-1:call-1');
    const other = await sent('run-1:call-2');
    expect(first).toMatch(/^mt-[A-Za-z0-9_-]{32}$/);
    expect(retry).toBe(first);
    expect(other).not.toBe(first);
    const before = upstream.requests.length;
    await gateway.call({ tool, connector: connector('/echo'), arguments: {}, idempotencyKey: 'run-1:call-3' });
    expect(upstream.requests.length).toBe(before + 1);
    expect(upstream.requests.at(-1)).toMatchObject({ method: 'GET' });
    expect(upstream.requests.at(-1)?.headers['idempotency-key']).toBeUndefined();
  });
});
