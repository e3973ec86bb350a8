import { createEgressPolicy } from '@maitento/egress';
import { createGateway, type Gateway } from '@maitento/gateway';
import type { Connector, Tool } from '@maitento/lang';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeResolver } from './helpers/resolver.js';
import { selfSignedCertificate, startRecordingUpstream, type Upstream } from '@maitento/testkit';
import { json } from './helpers/upstream.js';

// Three servers on 127.0.0.1: the configured HTTPS origin, another HTTPS port, and plain HTTP. Two names
// (orders.example.test and other.example.test) resolve to the same address, so "another host" is a real other origin.
const resolver = fakeResolver({ 'orders.example.test': '127.0.0.1', 'other.example.test': '127.0.0.1' });
let tls: { key: string; cert: string };
let origin: Upstream;
let otherPort: Upstream;
let plain: Upstream;
let gateway: Gateway;

function redirector(
  req: Parameters<Parameters<typeof startRecordingUpstream>[0]>[0],
  res: Parameters<Parameters<typeof startRecordingUpstream>[0]>[1],
) {
  const url = new URL(req.url ?? '/', 'http://x');
  const to = url.searchParams.get('to');
  if (to) {
    res.writeHead(302, { location: to });
    res.end();
  } else json(res, 200, { at: url.pathname });
}

beforeAll(async () => {
  tls = selfSignedCertificate(['orders.example.test', 'other.example.test']);
  origin = await startRecordingUpstream(redirector, { tls });
  otherPort = await startRecordingUpstream(redirector, { tls });
  plain = await startRecordingUpstream(redirector);
  gateway = createGateway({ policy: createEgressPolicy({ allow: '127.0.0.1/32' }), resolver, tls: { ca: tls.cert } });
});

afterAll(async () => {
  await gateway.close();
  await Promise.all([origin.close(), otherPort.close(), plain.close()]);
});

function connector(url: string): Connector {
  return {
    kind: 'connector',
    name: 'orders-redirecting',
    method: 'GET',
    url,
    description: 'a redirecting endpoint',
    parameters: { path: [], query: [] },
    schema: {},
    auth: 'Header',
  };
}

const tool: Tool = {
  kind: 'tool',
  name: 'redirecting',
  connector: 'orders-redirecting',
  guidance: 'test',
  bindings: { request: {}, query: {}, path: {} },
  auth: { header: 'X-Api-Key', secret: 'k' },
  requiresApproval: false,
};

/** A chain of redirects: each URL redirects to the next (nested `to=` parameters); the last answers 200. */
function chain(urls: string[]): string {
  let url = urls[urls.length - 1];
  for (let i = urls.length - 2; i >= 0; i--) url = `${urls[i]}?to=${encodeURIComponent(url)}`;
  return url;
}

const cases = () => {
  const o = `https://orders.example.test:${origin.port}`;
  return {
    'the same origin (sent)': { urls: [`${o}/start`, `${o}/final`], sentAtEnd: true },
    'another host on the same port': {
      urls: [`${o}/start`, `https://other.example.test:${origin.port}/final`],
      sentAtEnd: false,
    },
    'another port': { urls: [`${o}/start`, `https://orders.example.test:${otherPort.port}/final`], sentAtEnd: false },
    'https down to http': { urls: [`${o}/start`, `http://orders.example.test:${plain.port}/final`], sentAtEnd: false },
    'https to http and back to the origin': {
      urls: [`${o}/start`, `http://orders.example.test:${plain.port}/middle`, `${o}/final`],
      sentAtEnd: false,
    },
  };
};

const headers = [
  { header: 'Authorization', value: 'tok-abc', sent: 'Bearer tok-abc' },
  { header: 'X-Api-Key', value: 'key-abc', sent: 'key-abc' },
  { header: 'X-Shop-Token', value: 'shop-abc', sent: 'shop-abc' },
];

describe('the credential on redirects', () => {
  for (const { header, value, sent } of headers) {
    for (const label of [
      'the same origin (sent)',
      'another host on the same port',
      'another port',
      'https down to http',
      'https to http and back to the origin',
    ] as const) {
      it(`${header}: a redirect to ${label}`, async () => {
        const { urls, sentAtEnd } = cases()[label];
        const marks = [origin, otherPort, plain].map((s) => s.requests.length);
        const result = await gateway.call({
          tool,
          connector: connector(chain(urls)),
          arguments: {},
          credential: { header, value },
        });
        expect(result.ok, JSON.stringify(result)).toBe(true);
        const received = [origin, otherPort, plain]
          .flatMap((s, i) => s.requests.slice(marks[i]))
          .sort((a, b) => a.url.length - b.url.length);
        // Every hop was made, and the credential went to the first (the configured URL) and, only when allowed, the last.
        expect(received).toHaveLength(urls.length);
        const first = received[received.length - 1];
        const last = received[0];
        expect(first.headers[header.toLowerCase()]).toBe(sent);
        expect(last.headers[header.toLowerCase()]).toBe(sentAtEnd ? sent : undefined);
        for (const middle of received.slice(1, -1)) expect(middle.headers[header.toLowerCase()]).toBeUndefined();
      });
    }
  }
});

// An OAuth2 connector's access token (docs/connections.md) follows the same rule as a secret, and is masked
// wherever the call is shown.
describe('an OAuth2 access token', () => {
  const oauth2 = (url: string): Connector => ({ ...connector(url), auth: 'OAuth2', provider: 'local-as' });
  const { auth: _auth, ...oauthTool } = tool;

  for (const label of ['the same origin (sent)', 'another host on the same port', 'https down to http'] as const) {
    it(`a redirect to ${label}`, async () => {
      const { urls, sentAtEnd } = cases()[label];
      const marks = [origin, otherPort, plain].map((s) => s.requests.length);
      const result = await gateway.call({
        tool: oauthTool,
        connector: oauth2(chain(urls)),
        arguments: {},
        credential: { bearer: 'at-xyz-123' },
      });
      expect(result.ok, JSON.stringify(result)).toBe(true);
      const received = [origin, otherPort, plain]
        .flatMap((s, i) => s.requests.slice(marks[i]))
        .sort((a, b) => a.url.length - b.url.length);
      expect(received[received.length - 1]?.headers.authorization).toBe('Bearer at-xyz-123');
      expect(received[0]?.headers.authorization).toBe(sentAtEnd ? 'Bearer at-xyz-123' : undefined);
    });
  }

  it('is masked in the prepared view and its hash does not depend on it', async () => {
    const url = `https://orders.example.test:${origin.port}/start`;
    const one = await gateway.prepare({
      tool: oauthTool,
      connector: oauth2(url),
      arguments: {},
      credential: { bearer: 'at-one-456' },
    });
    const two = await gateway.prepare({
      tool: oauthTool,
      connector: oauth2(url),
      arguments: {},
      credential: { bearer: 'at-two-789' },
    });
    if (!('prepared' in one) || !('prepared' in two)) throw new Error('not prepared');
    expect(JSON.stringify(one.view)).not.toContain('at-one-456');
    expect(one.view.headers.authorization).toBeDefined();
    expect(one.hash).toBe(two.hash);
  });

  it('sends nothing without a token: no end user, no connection, or a provider that failed', async () => {
    const url = `https://orders.example.test:${origin.port}/start`;
    const mark = origin.requests.length;
    const none = await gateway.call({ tool: oauthTool, connector: oauth2(url), arguments: {} });
    expect(none).toMatchObject({ ok: false, code: 'api:connections:end-user-missing' });
    const missing = await gateway.call({
      tool: oauthTool,
      connector: oauth2(url),
      arguments: {},
      credential: { authorization: { provider: 'local-as', endUser: 'u-1', reason: 'not connected' } },
    });
    expect(missing).toMatchObject({ ok: false, code: 'api:connections:authorization-required' });
    expect(missing.error).toContain('u-1');
    // A bearer is never sent for a connector with another auth.
    const header = await gateway.call({
      tool,
      connector: connector(url),
      arguments: {},
      credential: { bearer: 'at-x' },
    });
    expect(header).toMatchObject({ ok: false, code: 'api:connectors:secret-missing' });
    expect(origin.requests.length).toBe(mark);
  });
});
