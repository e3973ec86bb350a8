import { createEgressPolicy, type Resolver } from '@maitento/egress';
import { createGateway, type Gateway, type ToolCallInput, toolResultText } from '@maitento/gateway';
import type { Connector, FunctionBinding, Tool } from '@maitento/lang';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { currentWeather, knowledgeSearch, openMeteoForecast, searchHandbook } from './helpers/resources.js';
import { startRecordingUpstream, type Upstream } from '@maitento/testkit';
import { json } from './helpers/upstream.js';

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
  upstream = await startRecordingUpstream((req, res) => {
    const { body } = req;
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
      case '/echo-proto':
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(`{"__proto__":{"polluted":"${key}"},"kept":true}`);
        return;
      case '/reset':
        res.socket?.destroy();
        return;
      default:
        json(res, 200, { url: req.url, body, method: req.method });
    }
  });
  elsewhere = await startRecordingUpstream((req, res) => json(res, 200, { url: req.url }), { host: '127.0.0.2' });
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
  return from.requests.length;
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
    const sent = new URL(upstream.requests.at(-1)?.url ?? '', 'http://x').searchParams;
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
    expect(upstream.requests.at(-1)?.url).toBe(path);
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

describe('hostile Location headers', () => {
  const to = (location: string) => probe(`/to?l=${encodeURIComponent(location)}`);

  it.each([
    ['userinfo to an allowed host', () => `http://user:pw@127.0.0.1:${upstream.port}/x`],
    ['userinfo hiding the real host', () => `http://127.0.0.1:${upstream.port}@127.0.0.2:${elsewhere.port}/x`],
    ['a scheme-relative //host', () => `//127.0.0.2:${elsewhere.port}/x`],
    ['backslashes for slashes', () => `\\\\127.0.0.2:${elsewhere.port}\\x`],
    ['a mixed slash and backslash', () => `/\\127.0.0.2:${elsewhere.port}/x`],
    ['a tab inside the host', () => `http://127.0.\t0.2:${elsewhere.port}/x`],
    ['an IPv6 literal with a zone id', () => 'http://[fe80::1%25eth0]/'],
    ['a name resolving nowhere public', () => `http://elsewhere.example.com:${elsewhere.port}/x`],
    ['the metadata IP in hex', () => 'http://0xa9fea9fe/latest'],
    ['localhost with a trailing dot', () => `http://localhost.:${upstream.port}/x`],
  ])('does not follow %s to a refused address', async (_label, location) => {
    const before = received(elsewhere);
    const result = await to(location());
    expect(result.ok).toBe(false);
    expect(['api:connectors:address-blocked', 'api:gateway:upstream-unreachable']).toContain(result.code);
    expect(received(elsewhere)).toBe(before);
  });

  it.each(['file:///etc/passwd', 'data:text/plain,hello', 'javascript:alert(1)', 'gopher://127.0.0.1:70/'])(
    'stops at a redirect to %s',
    async (location) => {
      const result = await to(location);
      expect(result).toMatchObject({ ok: false, code: 'api:gateway:upstream-unreachable' });
      expect(JSON.stringify(result)).not.toContain(secret);
    },
  );

  it('follows a relative Location on the same origin, with the credential', async () => {
    const result = await to('../plain?x=1');
    expect(result.ok).toBe(true);
    expect(upstream.requests.at(-1)).toMatchObject({ url: '/plain?x=1', headers: { 'x-api-key': secret } });
  });

  it('sends no credential to another origin reached through a scheme-relative Location', async () => {
    const allowBoth = createGateway({ policy: createEgressPolicy({ allow: '127.0.0.0/30' }), resolver });
    try {
      const result = await probe(`/to?l=${encodeURIComponent(`//127.0.0.2:${elsewhere.port}/landed`)}`, {}, allowBoth);
      expect(result.ok).toBe(true);
      expect(elsewhere.requests.at(-1)?.url).toBe('/landed');
      expect(elsewhere.requests.at(-1)?.headers['x-api-key']).toBeUndefined();
    } finally {
      await allowBoth.close();
    }
  });
});

describe('the one deadline', () => {
  it('is not extended by a body that drips a byte at a time', async () => {
    const started = Date.now();
    const result = await probe('/drip', {}, quick);
    expect(result).toMatchObject({ ok: false, code: 'api:gateway:timeout' });
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it('covers a redirect whose body never ends', async () => {
    const started = Date.now();
    const result = await probe('/slow-redirect-body', {}, quick);
    expect(result).toMatchObject({ ok: false, code: 'api:gateway:timeout' });
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it('covers the name lookup of a redirect hop', async () => {
    const started = Date.now();
    const before = slowNameStarted;
    const result = await probe(`/to?l=${encodeURIComponent('http://slow-dns.example.com/x')}`, {}, quick);
    expect(slowNameStarted).toBe(before + 1);
    expect(result).toMatchObject({ ok: false, code: 'api:gateway:timeout' });
    expect(Date.now() - started).toBeLessThan(1_500);
  }, 5_000);
});

describe('name resolution at call time', () => {
  it('reports a name with no addresses as not resolved, and sends nothing', async () => {
    const before = received();
    const result = await probe('', { connector: endpoint(`http://empty.example.com:${upstream.port}/x`) });
    expect(result).toMatchObject({ ok: false, code: 'api:egress:name-not-resolved' });
    expect(received()).toBe(before);
  });

  it('judges a host with a trailing dot like the host without it', async () => {
    const result = await probe('', { connector: endpoint(`http://api.example.com.:${upstream.port}/trailing`) });
    expect(result.ok, JSON.stringify(result)).toBe(true);
    const refused = await probe('', { connector: endpoint(`http://elsewhere.example.com.:${elsewhere.port}/x`) });
    expect(refused).toMatchObject({ ok: false, code: 'api:connectors:address-blocked' });
  });

  it('refuses a configured IPv6 literal with a zone id', async () => {
    const result = await probe('', { connector: endpoint('http://[fe80::1%25eth0]:8080/x') });
    expect(result).toMatchObject({ ok: false, code: 'api:connectors:address-blocked' });
  });

  it('refuses with the error and code the seed shows, followed by the address the name resolved to', async () => {
    names['orders.internal.example.com'] = ['10.1.2.3'];
    const result = await probe('', { connector: endpoint('https://orders.internal.example.com/orders') });
    expect(JSON.parse(toolResultText(result))).toEqual({
      error:
        "Maitento won't call orders.internal.example.com: the address isn't on the public internet. Tools can only call public addresses, never localhost, private networks or internal names. orders.internal.example.com resolves to 10.1.2.3.",
      code: 'api:connectors:address-blocked',
    });
  });
});

describe('bodies', () => {
  it('cuts a chunked body with no content-length at the limit and says it was cut', async () => {
    const small = createGateway({
      policy: createEgressPolicy({ allow: '127.0.0.1/32' }),
      resolver,
      maxResponseBytes: 50_000,
    });
    try {
      const result = await probe('/chunked-big', {}, small);
      expect(result.ok).toBe(true);
      expect(result.truncated).toEqual({ limit: 50_000 });
      expect((result.body as string).length).toBe(50_000);
      expect(toolResultText(result)).toMatch(
        /^\[The response was cut at 50000 bytes; the whole response was an unknown size\.\]/,
      );
    } finally {
      await small.close();
    }
  });
});

describe('the secret in what comes back', () => {
  it('is masked in Set-Cookie, WWW-Authenticate, a custom header and a non-2xx body', async () => {
    const result = await probe('/echo-headers');
    expect(result).toMatchObject({ ok: false, status: 401, code: 'api:gateway:upstream-status' });
    expect(JSON.stringify(result)).not.toContain(secret);
    expect(result.headers?.['set-cookie']).toBe('session=[secret]; HttpOnly, other=[secret]');
    expect(result.headers?.['www-authenticate']).toBe('Bearer realm="[secret]"');
    expect(result.body).toEqual({ denied: '[secret]' });
  });

  it('is masked when it arrives split across two chunks', async () => {
    const result = await probe('/split-secret');
    expect(result.body).toBe('before [secret] after');
  });

  it('is masked when the body is cut in the middle of it', async () => {
    const small = createGateway({
      policy: createEgressPolicy({ allow: '127.0.0.1/32' }),
      resolver,
      maxResponseBytes: 1_000,
    });
    try {
      const result = await probe('/secret-at-cut?limit=1000', {}, small);
      expect(result.truncated).toMatchObject({ limit: 1_000 });
      expect(result.body as string).not.toContain(secret.slice(0, 10));
      expect((result.body as string).endsWith('[secret]')).toBe(true);
    } finally {
      await small.close();
    }
  });

  it('is masked when a JSON body spells it with \\u escapes', async () => {
    const result = await probe('/escaped-secret');
    expect(result.ok).toBe(true);
    expect(result.body).toEqual({ echo: '[secret]' });
  });

  it('is absent from the error of a transport failure', async () => {
    const result = await probe('/reset');
    expect(result).toMatchObject({ ok: false, code: 'api:gateway:upstream-unreachable' });
    expect(JSON.stringify(result)).not.toContain(secret);
  });
});

describe("the platform's own origin", () => {
  it('is refused to a connector without auth = "Maitento", even when the policy does not name it', async () => {
    const withPlatform = createGateway({
      policy: createEgressPolicy({ allow: '127.0.0.1/32' }),
      resolver,
      platform: { origin: `http://api.example.com:${upstream.port}`, token: async () => 'platform-token' },
    });
    try {
      const before = received();
      const result = await probe('/platform-api', {}, withPlatform);
      expect(result).toMatchObject({ ok: false, code: 'api:connectors:address-blocked' });
      const hop = await probe(
        `/to?l=${encodeURIComponent(`http://api.example.com:${upstream.port}/x`)}`,
        {
          connector: endpoint(
            `http://127.0.0.1:${upstream.port}/to?l=${encodeURIComponent(`http://api.example.com:${upstream.port}/x`)}`,
          ),
        },
        withPlatform,
      );
      expect(hop).toMatchObject({ ok: false, code: 'api:connectors:address-blocked' });
      expect(received()).toBe(before + 1);
    } finally {
      await withPlatform.close();
    }
  });
});

describe('a JSON body with a __proto__ key', () => {
  it('keeps the key as data when secrets are masked, and pollutes nothing', async () => {
    const result = await probe('/echo-proto');
    expect(result.ok).toBe(true);
    expect(JSON.stringify(result.body)).toBe('{"__proto__":{"polluted":"[secret]"},"kept":true}');
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
  });
});
