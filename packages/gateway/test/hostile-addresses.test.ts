import { createEgressPolicy } from '@maitento/egress';
import { createGateway, type Gateway } from '@maitento/gateway';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeResolver } from './helpers/resolver.js';
import { getOrder, ordersGetOrder } from './helpers/resources.js';
import { startRecordingUpstream, type Upstream } from '@maitento/testkit';
import { json } from './helpers/upstream.js';

const credential = { header: 'X-Api-Key', value: 'shop-key-123' };
const resolver = fakeResolver({
  'orders.example.com': '127.0.0.1',
  'private.example.com': '10.0.0.1',
  'mixed.example.com': ['127.0.0.1', '10.0.0.1'],
  'second.example.com': '127.0.0.2',
});
let upstream: Upstream;
let second: Upstream;
let gateway: Gateway;

beforeAll(async () => {
  upstream = await startRecordingUpstream((req, res) => {
    const target = new URL(req.url ?? '/', 'http://x').searchParams.get('to');
    if (target) {
      res.writeHead(302, { location: target });
      res.end();
    } else json(res, 200, { ok: true });
  });
  // Also loopback, but outside the allow-list (127.0.0.1/32): a stand-in for any private address.
  second = await startRecordingUpstream((_req, res) => json(res, 200, { reached: true }), { host: '127.0.0.2' });
  gateway = createGateway({ policy: createEgressPolicy({ allow: '127.0.0.1/32' }), resolver });
});

afterAll(async () => {
  await gateway.close();
  await upstream.close();
  await second.close();
});

function call(base: string, orderId = 'A-1') {
  return gateway.call({
    tool: getOrder,
    connector: ordersGetOrder(base),
    arguments: { additionalInputs: { 'path.orderId': orderId } },
    credential,
  });
}

describe('addresses refused at call time', () => {
  it('refuses a name that resolves to 10.0.0.1', async () => {
    const result = await call(`http://private.example.com:${upstream.port}`);
    expect(result).toMatchObject({ ok: false, code: 'api:connectors:address-blocked' });
    expect(result.error).toContain("Maitento won't call private.example.com");
  });

  it('refuses a name with one allowed and one private answer, without opening any connection', async () => {
    const connections = upstream.connections;
    const result = await call(`http://mixed.example.com:${upstream.port}`);
    expect(result.code).toBe('api:connectors:address-blocked');
    expect(upstream.connections).toBe(connections);
  });

  it('refuses private IP literals without resolving them', async () => {
    for (const base of ['http://10.0.0.1', 'http://169.254.169.254', 'http://[::1]:9', 'http://0x7f000002/']) {
      const lookups = resolver.calls.length;
      const result = await call(base);
      expect(result.code, base).toBe('api:connectors:address-blocked');
      expect(resolver.calls.length).toBe(lookups);
    }
  });

  it('refuses 127.0.0.2 when only 127.0.0.1/32 is allowed, and the server there sees nothing', async () => {
    const result = await call(`http://second.example.com:${second.port}`);
    expect(result.code).toBe('api:connectors:address-blocked');
    expect(second.requests).toEqual([]);
    expect(second.connections).toBe(0);
  });

  it('reports a name that does not resolve', async () => {
    const result = await call(`http://nowhere.example.com:${upstream.port}`);
    expect(result).toMatchObject({ ok: false, code: 'api:egress:name-not-resolved' });
  });
});

describe('redirect hops are checked like the first call', () => {
  for (const [label, target] of [
    ['a name that resolves to a private address', () => `http://private.example.com:${upstream.port}/x`],
    ['127.0.0.2 through a name', () => `http://second.example.com:${second.port}/x`],
    ['127.0.0.2 as a literal', () => `http://127.0.0.2:${second.port}/x`],
    ['the metadata address', () => 'http://169.254.169.254/latest/meta-data/'],
    ['localhost', () => `http://localhost:${upstream.port}/x`],
  ] as const) {
    it(`refuses a redirect to ${label}`, async () => {
      const before = upstream.requests.length;
      const result = await gateway.call({
        tool: getOrder,
        connector: ordersGetOrder(`http://orders.example.com:${upstream.port}`),
        arguments: { additionalInputs: { 'path.orderId': 'A-1' } },
        credential,
      });
      expect(result.ok).toBe(true);
      const redirecting = {
        tool: getOrder,
        connector: { ...ordersGetOrder(`http://orders.example.com:${upstream.port}`) },
        arguments: { additionalInputs: { 'path.orderId': 'A-1' } },
        credential,
      };
      redirecting.connector.url += `?to=${encodeURIComponent(target())}`;
      const refused = await gateway.call(redirecting);
      expect(refused).toMatchObject({ ok: false, code: 'api:connectors:address-blocked' });
      expect(upstream.requests.length).toBe(before + 2);
      expect(second.requests).toEqual([]);
    });
  }

  it('refuses a redirect to a non-http scheme', async () => {
    const connector = ordersGetOrder(`http://orders.example.com:${upstream.port}`);
    connector.url += `?to=${encodeURIComponent('file:///etc/passwd')}`;
    const result = await gateway.call({
      tool: getOrder,
      connector,
      arguments: { additionalInputs: { 'path.orderId': 'A-1' } },
      credential,
    });
    expect(result).toMatchObject({ ok: false, code: 'api:gateway:upstream-unreachable' });
  });
});

describe('a name whose address changes', () => {
  it('is refused when a new connection is opened to a private address, although its first check passed', async () => {
    const names: Record<string, string> = { 'flip.example.com': '127.0.0.1' };
    const flipping = async (hostname: string) => {
      const address = names[hostname];
      if (address === undefined) throw Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' });
      return [{ address, family: 4 as const }];
    };
    const closing = await startRecordingUpstream((_req, res) => json(res, 200, { ok: true }, { connection: 'close' }));
    const own = createGateway({ policy: createEgressPolicy({ allow: '127.0.0.1/32' }), resolver: flipping });
    try {
      const first = await own.call({
        tool: getOrder,
        connector: ordersGetOrder(`http://flip.example.com:${closing.port}`),
        arguments: { additionalInputs: { 'path.orderId': 'A-1' } },
        credential,
      });
      expect(first.ok).toBe(true);
      names['flip.example.com'] = '10.0.0.1';
      const second = await own.call({
        tool: getOrder,
        connector: ordersGetOrder(`http://flip.example.com:${closing.port}`),
        arguments: { additionalInputs: { 'path.orderId': 'A-2' } },
        credential,
      });
      expect(second).toMatchObject({ ok: false, code: 'api:connectors:address-blocked' });
      expect(closing.requests.map((r) => r.url)).toEqual(['/orders/A-1']);
    } finally {
      await own.close();
      await closing.close();
    }
  });
});

describe('path values', () => {
  for (const value of ['..', '.', '%2e%2e', '%2E%2e', '%2e', '.%2E', '%252e%252e', 'a\u0000b', 'line\nbreak', '']) {
    it(`refuses the path value ${JSON.stringify(value)} and sends nothing`, async () => {
      const before = upstream.requests.length;
      const result = await call(`http://orders.example.com:${upstream.port}`, value);
      expect(result.ok).toBe(false);
      expect(result.code).toBe('api:gateway:path-invalid');
      expect(upstream.requests.length).toBe(before);
    });
  }

  it('percent-encodes a path value, slashes and query characters included', async () => {
    const before = upstream.requests.length;
    const result = await call(`http://orders.example.com:${upstream.port}`, "a/b?c=d#e f'");
    expect(result.ok).toBe(true);
    expect(upstream.requests[before].url).toBe('/orders/a%2Fb%3Fc%3Dd%23e%20f%27');
  });
});
