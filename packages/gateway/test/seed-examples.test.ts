import { createEgressPolicy } from '@maitento/egress';
import {
  createGateway,
  type Gateway,
  isPreparedRequest,
  type ToolCallInput,
  type ToolCallResult,
} from '@maitento/gateway';
import type { FunctionBinding } from '@maitento/lang';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeResolver } from './helpers/resolver.js';
import {
  currentWeather,
  getOrder,
  knowledgeSearch,
  openMeteoForecast,
  ordersGetOrder,
  ordersRefundOrder,
  refundOrder,
  searchHandbook,
} from './helpers/resources.js';
import { startRecordingUpstream, type Upstream } from '@maitento/testkit';
import { json } from './helpers/upstream.js';

// The seed's hosts resolve (through a resolver the test controls) to a real server on 127.0.0.1, so every call
// goes through name resolution, the address check and the pinned connection, exactly as in production.
const resolver = fakeResolver({
  'api.open-meteo.com': '127.0.0.1',
  'orders.example.com': '127.0.0.1',
  'knowledge.example.com': '127.0.0.1',
});
let upstream: Upstream;
let allowed: Gateway;
let strict: Gateway;

const BASE_HEADERS = { 'user-agent': 'Maitento/0.1', accept: 'application/json, */*;q=0.5' };

beforeAll(async () => {
  upstream = await startRecordingUpstream((req, res) => {
    if (req.url?.startsWith('/v1/forecast')) json(res, 200, { current: { temperature_2m: 14.2 } });
    else if (req.url?.startsWith('/orders/')) json(res, 200, { id: 'A-1001', status: 'shipped' });
    else json(res, 200, { results: [{ title: 'Holidays' }] });
  });
  allowed = createGateway({ policy: createEgressPolicy({ allow: '127.0.0.1/32' }), resolver });
  strict = createGateway({ policy: createEgressPolicy(), resolver });
});

afterAll(async () => {
  await allowed.close();
  await strict.close();
  await upstream.close();
});

function since(count: number) {
  return upstream.requests.slice(count);
}

const examples = () => {
  const port = upstream.port;
  const weather = openMeteoForecast(`http://api.open-meteo.com:${port}`);
  const orders = ordersGetOrder(`http://orders.example.com:${port}`);
  const refund = ordersRefundOrder(`http://orders.example.com:${port}`);
  const search = knowledgeSearch(`http://knowledge.example.com:${port}`);
  const partition: FunctionBinding = {
    name: 'partitionId',
    function: 'search-handbook',
    target: 'partitionId',
    type: 'request',
    required: true,
    description: 'The knowledge base to search',
  };
  return {
    'current-weather': {
      input: {
        tool: currentWeather,
        connector: weather,
        arguments: { additionalInputs: { 'query.latitude': 51.5072, 'query.longitude': -0.1276 } },
      },
      expected: {
        method: 'GET',
        url: '/v1/forecast?latitude=51.5072&longitude=-0.1276&current=temperature_2m%2Cwind_speed_10m%2Cweather_code',
        headers: { ...BASE_HEADERS, host: `api.open-meteo.com:${port}` },
        body: '',
      },
    },
    'get-order': {
      input: {
        tool: getOrder,
        connector: orders,
        arguments: { additionalInputs: { 'path.orderId': 'A-1001' } },
        credential: { header: 'X-Api-Key', value: 'shop-key-123' },
      },
      expected: {
        method: 'GET',
        url: '/orders/A-1001',
        headers: { ...BASE_HEADERS, host: `orders.example.com:${port}`, 'x-api-key': 'shop-key-123' },
        body: '',
      },
    },
    'refund-order': {
      input: {
        tool: refundOrder,
        connector: refund,
        arguments: {
          request: { amount: 12.5, reason: 'Blue mug arrived smashed' },
          additionalInputs: { 'path.orderId': 'A-1001' },
        },
        credential: { header: 'X-Api-Key', value: 'shop-key-123' },
        idempotencyKey: 'run-1/call-1',
      },
      expected: {
        method: 'POST',
        url: '/orders/A-1001/refund',
        headers: {
          ...BASE_HEADERS,
          host: `orders.example.com:${port}`,
          'x-api-key': 'shop-key-123',
          'content-type': 'application/json',
          'idempotency-key': expect.stringMatching(/^mt-[A-Za-z0-9_-]{32}$/),
        },
        body: '{"amount":12.5,"reason":"Blue mug arrived smashed"}',
      },
    },
    'search-handbook': {
      input: {
        tool: searchHandbook,
        connector: search,
        arguments: { request: { query: 'How many holidays do I get?' } },
        runBindings: [{ binding: partition, value: 'kb-handbook-7' }],
        idempotencyKey: 'run-2/call-1',
      },
      expected: {
        method: 'POST',
        url: '/v1/knowledge/search',
        headers: {
          ...BASE_HEADERS,
          host: `knowledge.example.com:${port}`,
          'content-type': 'application/json',
          'idempotency-key': expect.stringMatching(/^mt-/),
        },
        body: '{"query":"How many holidays do I get?","partitionId":"kb-handbook-7"}',
      },
    },
  };
};

// A tool that requires approval is sent only by callApproved: these calls are the ones a person approved.
async function asApproved(gw: Gateway, input: ToolCallInput): Promise<ToolCallResult> {
  if (!input.tool.requiresApproval) return gw.call(input);
  const prepared = await gw.prepare(input);
  if (!isPreparedRequest(prepared)) return prepared;
  return gw.callApproved(input, { hash: prepared.hash, consume: async () => undefined });
}

describe('the seed examples through the gateway', () => {
  for (const name of ['current-weather', 'get-order', 'refund-order', 'search-handbook'] as const) {
    it(`${name}: sends exactly the request the seed describes and returns the 2xx body`, async () => {
      const { input, expected } = examples()[name];
      const before = upstream.requests.length;
      const result = await asApproved(allowed, input);
      expect(result.ok, JSON.stringify(result)).toBe(true);
      expect(result.status).toBe(200);
      const [received, ...more] = since(before);
      expect(more).toEqual([]);
      expect(received.method).toBe(expected.method);
      expect(received.url).toBe(expected.url);
      const { connection: _connection, ...headers } = received.headers;
      const length = expected.body === '' ? {} : { 'content-length': String(Buffer.byteLength(expected.body)) };
      expect(headers).toEqual({ ...expected.headers, ...length });
      expect(received.body).toBe(expected.body);
    });

    it(`${name}: is refused with the default policy and the server sees nothing`, async () => {
      const { input } = examples()[name];
      const before = upstream.requests.length;
      const connections = upstream.connections;
      const result = await asApproved(strict, input);
      expect(result).toMatchObject({ ok: false, code: 'api:connectors:address-blocked' });
      expect(result.error).toMatch(/^Maitento won't call [a-z.-]+: the address isn't on the public internet/);
      expect(since(before)).toEqual([]);
      expect(upstream.connections).toBe(connections);
    });
  }

  it('search-handbook: a missing run input falls back to the binding default', async () => {
    const { input } = examples()['search-handbook'];
    const binding = { ...input.runBindings[0].binding, default: 'kb-default' };
    const before = upstream.requests.length;
    const result = await allowed.call({ ...input, runBindings: [{ binding, value: '' }] });
    expect(result.ok).toBe(true);
    expect(JSON.parse(since(before)[0].body)).toEqual({
      query: 'How many holidays do I get?',
      partitionId: 'kb-default',
    });
  });

  it('an inputs.functions.auth credential replaces the tool one: the run header and value are sent', async () => {
    const { input } = examples()['get-order'];
    const before = upstream.requests.length;
    const result = await allowed.call({ ...input, credential: { header: 'Authorization', value: 'second-shop-key' } });
    expect(result.ok).toBe(true);
    const [received] = since(before);
    expect(received.headers.authorization).toBe('Bearer second-shop-key');
    expect(received.headers['x-api-key']).toBeUndefined();
  });

  it('a missing secret gives "Could not find secret … for connector …" and sends nothing', async () => {
    const { input } = examples()['get-order'];
    const before = upstream.requests.length;
    const connections = upstream.connections;
    const result = await allowed.call({
      ...input,
      credential: { missing: { secret: '9f1c0d7e-2c1e-4b8e-9d7a-1b2c3d4e5f60' } },
    });
    expect(result).toEqual({
      ok: false,
      error: 'Could not find secret 9f1c0d7e-2c1e-4b8e-9d7a-1b2c3d4e5f60 for connector orders-get-order',
      code: 'api:gateway:secret-not-found',
    });
    expect(since(before)).toEqual([]);
    expect(upstream.connections).toBe(connections);
  });

  it('a Header connector called with no secret at all is api:connectors:secret-missing and sends nothing', async () => {
    const { input } = examples()['get-order'];
    const before = upstream.requests.length;
    const result = await allowed.call({ ...input, credential: undefined });
    expect(result).toMatchObject({ ok: false, code: 'api:connectors:secret-missing' });
    expect(result.error).toContain('get-order calls the Header connector orders-get-order');
    expect(since(before)).toEqual([]);
  });

  it('current-weather: an argument naming the bound query.current is refused and nothing is sent', async () => {
    const { input } = examples()['current-weather'];
    const before = upstream.requests.length;
    const result = await allowed.call({
      ...input,
      arguments: { additionalInputs: { 'query.latitude': 1, 'query.longitude': 2, 'query.current': 'x' } },
    });
    expect(result).toMatchObject({ ok: false, code: 'api:gateway:argument-bound' });
    expect(result.error).toBe(
      'current-weather does not accept query.current: its value is fixed by the tool or the run. Leave it out.',
    );
    expect(since(before)).toEqual([]);
  });

  it('refuses to call a tool that requires approval through call(), sending nothing', async () => {
    const { input } = examples()['refund-order'];
    const before = upstream.requests.length;
    const result = await allowed.call(input);
    expect(result).toMatchObject({ ok: false, code: 'api:approvals:required' });
    expect(result.error).toContain('refund-order needs a person to approve each call');
    expect(since(before)).toEqual([]);
  });

  it('prepare runs every step but sending: the exact request with the secret masked, and nothing sent', async () => {
    const { input } = examples()['refund-order'];
    const before = upstream.requests.length;
    const prepared = await allowed.prepare(input);
    if (!isPreparedRequest(prepared)) throw new Error(JSON.stringify(prepared));
    expect(prepared.view).toEqual({
      method: 'POST',
      url: `http://orders.example.com:${upstream.port}/orders/A-1001/refund`,
      headers: {
        'user-agent': 'Maitento/0.1',
        accept: 'application/json, */*;q=0.5',
        'content-type': 'application/json',
        'idempotency-key': expect.stringMatching(/^mt-/),
        'x-api-key': '[secret]',
      },
      body: { amount: 12.5, reason: 'Blue mug arrived smashed' },
    });
    expect(prepared.headers['x-api-key']).toBe('shop-key-123');
    expect(since(before)).toEqual([]);
    const refused = await strict.prepare(input);
    expect(refused).toMatchObject({ ok: false, code: 'api:connectors:address-blocked' });
  });
});
