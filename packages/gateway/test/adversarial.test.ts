import { createEgressPolicy, type Resolver } from '@maitento/egress';
import { createGateway, type Gateway, type ToolCallInput, toolResultText } from '@maitento/gateway';
import type { Connector, FunctionBinding, Tool } from '@maitento/lang';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { currentWeather, knowledgeSearch, openMeteoForecast, searchHandbook } from './helpers/resources.js';
import { json, startUpstream, type Upstream } from './helpers/upstream.js';

// An attacker's view of one call: the model's arguments, the upstream's answers and DNS are hostile.

const secret = 'sk-live-0123456789abcdef';
const names: Record<string, string[]> = {
  'api.example.com': ['127.0.0.1'],
  'elsewhere.example.com': ['127.0.0.2'],
};
let slowNameStarted = 0;
const resolver: Resolver = async (hostname) => {
  if (hostname === 'slow-dns.example.com') {
    slowNameStarted++;
    return new Promise(() => {});
  }
  if (hostname === 'empty.example.com') return [];
  const answer = names[hostname.replace(/\.$/, '')];
  if (answer === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  return answer.map((address) => ({ address, family: address.includes(':') ? (6 as const) : (4 as const) }));
};

let upstream: Upstream;
let elsewhere: Upstream;
let gateway: Gateway;
let quick: Gateway;

beforeAll(async () => {
  upstream = await startUpstream((req, res, body) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const key = String(req.headers['x-api-key'] ?? '');
    switch (url.pathname) {
      case '/to':
        res.writeHead(302, { location: url.searchParams.get('l') ?? '/' });
        res.end();
        return;
      case '/drip': {
        res.writeHead(200, { 'content-type': 'text/plain' });
        const timer = setInterval(() => res.write('.'), 20);
        res.on('close', () => clearInterval(timer));
        return;
      }
      case '/slow-redirect-body': {
        res.writeHead(302, { location: '/plain' });
        const timer = setInterval(() => res.write('.'), 20);
        res.on('close', () => clearInterval(timer));
        return;
      }
      case '/chunked-big':
        res.writeHead(200, { 'content-type': 'text/plain' });
        for (let i = 0; i < 30; i++) res.write('y'.repeat(10_000));
        res.end();
        return;
      case '/split-secret':
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write(`before ${key.slice(0, 7)}`);
        setTimeout(() => res.end(`${key.slice(7)} after`), 20);
        return;
      case '/secret-at-cut': {
        res.writeHead(200, { 'content-type': 'text/plain' });
        const limit = Number(url.searchParams.get('limit'));
        res.end(`${'z'.repeat(limit - 10)}${key}${'z'.repeat(100)}`);
        return;
      }
      case '/escaped-secret': {
        const escaped = [...key].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(`{"echo":"${escaped}"}`);
        return;
      }
      case '/echo-headers':
        res.writeHead(401, {
          'content-type': 'application/json',
          'set-cookie': [`session=${key}; HttpOnly`, `other=${encodeURIComponent(key)}`],
          'www-authenticate': `Bearer realm="${key}"`,
          'x-debug': `you sent ${key}`,
        });
        res.end(JSON.stringify({ denied: key }));
        return;
      case '/reset':
        req.socket.destroy();
        return;
      default:
        json(res, 200, { url: req.url, body, method: req.method });
    }
  });
  elsewhere = await startUpstream((req, res) => json(res, 200, { url: req.url }), { host: '127.0.0.2' });
  const policy = createEgressPolicy({ allow: '127.0.0.1/32' });
  gateway = createGateway({ policy, resolver });
  quick = createGateway({ policy, resolver, timeoutMs: 300 });
});

afterAll(async () => {
  await Promise.all([gateway.close(), quick.close()]);
  await Promise.all([upstream.close(), elsewhere.close()]);
});

const tool: Tool = {
  kind: 'tool',
  name: 'probe',
  connector: 'probe-endpoint',
  guidance: 'test',
  bindings: { request: {}, query: {}, path: {} },
  auth: { header: 'X-Api-Key', secret: 'k' },
  requiresApproval: false,
};

function endpoint(url: string, extra: Partial<Connector> = {}): Connector {
  return {
    kind: 'connector',
    name: 'probe-endpoint',
    method: 'GET',
    url,
    description: 'test',
    parameters: { path: [], query: [] },
    schema: {},
    auth: 'Header',
    ...extra,
  };
}

function probe(path: string, extra: Partial<ToolCallInput> = {}, via: Gateway = gateway) {
  return via.call({
    tool,
    connector: endpoint(`http://api.example.com:${upstream.port}${path}`),
    arguments: {},
    credential: { header: 'X-Api-Key', value: secret },
    ...extra,
  });
}

function received(from = upstream) {
  return from.received.length;
}

describe('arguments that try to reach bound fields', () => {
  const partition: FunctionBinding = {
    function: 'search-handbook',
    name: 'partitionId',
    target: 'partitionId',
    type: 'request',
    required: true,
    description: 'the knowledge base',
  } as FunctionBinding;
  const search = (args: unknown) =>
    gateway.call({
      tool: searchHandbook,
      connector: knowledgeSearch(`http://api.example.com:${upstream.port}`),
      arguments: args,
      runBindings: [{ binding: partition, value: 'kb-mine' }],
    });

  it.each([
    ['the bound field itself', '{"request":{"query":"q","partitionId":"kb-other"}}', 'api:gateway:argument-bound'],
    [
      '__proto__ carrying it',
      '{"request":{"query":"q","__proto__":{"partitionId":"kb-other"}}}',
      'api:gateway:argument-unknown',
    ],
    [
      'constructor',
      '{"request":{"query":"q","constructor":{"partitionId":"kb-other"}}}',
      'api:gateway:argument-unknown',
    ],
    ['a case variant', '{"request":{"query":"q","PartitionId":"kb-other"}}', 'api:gateway:argument-unknown'],
    [
      'a top-level __proto__',
      '{"__proto__":{"request":{"partitionId":"kb-other"}},"request":{"query":"q"}}',
      'api:gateway:argument-unknown',
    ],
  ])('refuses %s and sends nothing', async (_label, text, code) => {
    const before = received();
    const result = await search(JSON.parse(text));
    expect(result).toMatchObject({ ok: false, code });
    expect(received()).toBe(before);
  });

  it.each([
    ['query.current', 'api:gateway:argument-bound'],
    ['query.Current', 'api:gateway:argument-unknown'],
    ['query.current ', 'api:gateway:argument-unknown'],
    [' query.current', 'api:gateway:argument-unknown'],
    ['query.__proto__', 'api:gateway:argument-unknown'],
    ['query.constructor', 'api:gateway:argument-unknown'],
    ['path.current', 'api:gateway:argument-unknown'],
    ['current', 'api:gateway:argument-unknown'],
  ])('refuses the additionalInputs key %j on a tool that binds query.current', async (key, code) => {
    const before = received();
    const result = await gateway.call({
      tool: currentWeather,
      connector: openMeteoForecast(`http://api.example.com:${upstream.port}`),
      arguments: { additionalInputs: { 'query.latitude': 1, 'query.longitude': 2, [key]: 'precipitation' } },
    });
    expect(result).toMatchObject({ ok: false, code });
    expect(received()).toBe(before);
  });

  it('keeps a query value that carries & and = inside its own parameter', async () => {
    const result = await gateway.call({
      tool: currentWeather,
      connector: openMeteoForecast(`http://api.example.com:${upstream.port}`),
      arguments: {
        additionalInputs: {
          'query.latitude': 1,
          'query.longitude': 2,
          'query.temperature_unit': 'celsius&current=precipitation#x',
        },
      },
    });
    expect(result.ok).toBe(true);
    const sent = new URL(upstream.received.at(-1)?.url ?? '', 'http://x').searchParams;
    expect(sent.getAll('current')).toEqual(['temperature_2m,wind_speed_10m,weather_code']);
    expect(sent.get('temperature_unit')).toBe('celsius&current=precipitation#x');
  });
});

describe('path values that try to leave their segment', () => {
  const order = (orderId: string) =>
    probe('', {
      connector: endpoint(`http://api.example.com:${upstream.port}/orders/{orderId}/items`, {
        parameters: { path: [{ name: 'orderId', description: 'id', type: 'string', required: true }], query: [] },
      }),
      arguments: { additionalInputs: { 'path.orderId': orderId } },
    });

  it.each([
    '..%2f',
    '..%2Fadmin',
    '../admin',
    '..\\admin',
    'a/../../admin',
    '%2e%2e%2fadmin',
    '..%252fadmin',
    '.%2f',
    '\uff0e\uff0e',
    '\u2025',
    '\uff0e',
    '\ufe52\ufe52',
    '%ef%bc%8e%ef%bc%8e',
    '%c0%ae%c0%ae',
    '\u0085',
  ])('refuses %j and sends nothing', async (value) => {
    const before = received();
    const result = await order(value);
    expect(result).toMatchObject({ ok: false, code: 'api:gateway:path-invalid' });
    expect(received()).toBe(before);
  });

  it.each([
    ['a/b', '/orders/a%2Fb/items'],
    ['%2F', '/orders/%252F/items'],
    ['a\\b', '/orders/a%5Cb/items'],
    ['...', '/orders/.../items'],
    ['.well', '/orders/.well/items'],
    ['100%', '/orders/100%25/items'],
    ['x?y#z', '/orders/x%3Fy%23z/items'],
    ['é', '/orders/%C3%A9/items'],
  ])('encodes %j into one segment', async (value, path) => {
    const result = await order(value);
    expect(result.ok, JSON.stringify(result)).toBe(true);
    expect(upstream.received.at(-1)?.url).toBe(path);
  });

  it('refuses a path value that is not well-formed Unicode as an invalid argument, not a transport failure', async () => {
    const before = received();
    const result = await order(JSON.parse('"A\\ud800"'));
    expect(result).toMatchObject({ ok: false, code: 'api:gateway:request-invalid' });
    expect(received()).toBe(before);
  });

  it('refuses a query value that is not well-formed Unicode before sending', async () => {
    const before = received();
    const result = await gateway.call({
      tool: currentWeather,
      connector: openMeteoForecast(`http://api.example.com:${upstream.port}`),
      arguments: {
        additionalInputs: { 'query.latitude': 1, 'query.longitude': 2, 'query.temperature_unit': '\udfff' },
      },
    });
    expect(result).toMatchObject({ ok: false, code: 'api:gateway:request-invalid' });
    expect(result.error).toContain('query.temperature_unit');
    expect(received()).toBe(before);
  });
});
