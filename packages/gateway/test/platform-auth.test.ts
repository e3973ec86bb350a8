import { createEgressPolicy } from '@maitento/egress';
import { createGateway, type Gateway } from '@maitento/gateway';
import type { Connector, Tool } from '@maitento/lang';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeResolver } from './helpers/resolver.js';
import { startRecordingUpstream, type Upstream } from '@maitento/testkit';
import { json } from './helpers/upstream.js';

let platform: Upstream;
let outside: Upstream;
let gateway: Gateway;
const tokensIssued: string[] = [];

beforeAll(async () => {
  platform = await startRecordingUpstream((req, res) => {
    const to = new URL(req.url ?? '/', 'http://x').searchParams.get('to');
    if (to) {
      res.writeHead(302, { location: to });
      res.end();
    } else json(res, 200, { knowledge: ['a'] });
  });
  outside = await startRecordingUpstream((_req, res) => json(res, 200, {}));
  gateway = createGateway({
    // The default policy: loopback is refused for everything but the platform's own origin.
    policy: createEgressPolicy(),
    resolver: fakeResolver({ 'public.example.com': '127.0.0.1' }),
    platform: {
      origin: `http://127.0.0.1:${platform.port}`,
      token: async ({ tool }) => {
        const token = `mt-token-${tool.name}-${tokensIssued.length}`;
        tokensIssued.push(token);
        return token;
      },
    },
  });
});

afterAll(async () => {
  await gateway.close();
  await platform.close();
  await outside.close();
});

const tool: Tool = {
  kind: 'tool',
  name: 'search-knowledge',
  connector: 'maitento-knowledge',
  guidance: 'g',
  bindings: { request: {}, query: {}, path: {} },
  requiresApproval: false,
};

function connector(url: string): Connector {
  return {
    kind: 'connector',
    name: 'maitento-knowledge',
    method: 'GET',
    url,
    description: 'd',
    parameters: { path: [], query: [] },
    schema: {},
    auth: 'Maitento',
  };
}

describe('auth = "Maitento"', () => {
  it("signs the call with a platform token toward the platform's own origin", async () => {
    const result = await gateway.call({ tool, connector: connector(`${platform.origin}/v1/knowledge`), arguments: {} });
    expect(result).toMatchObject({ ok: true, body: { knowledge: ['a'] } });
    expect(platform.requests.at(-1)?.headers.authorization).toBe(`Bearer ${tokensIssued.at(-1)}`);
    expect(JSON.stringify(result)).not.toContain(tokensIssued.at(-1));
  });

  it('refuses any other host without asking for a token', async () => {
    const issued = tokensIssued.length;
    for (const url of [
      `http://public.example.com:${outside.port}/v1/knowledge`,
      `http://127.0.0.1:${outside.port}/x`,
    ]) {
      const result = await gateway.call({ tool, connector: connector(url), arguments: {} });
      expect(result, url).toMatchObject({ ok: false, code: 'api:connectors:address-blocked' });
    }
    expect(tokensIssued.length).toBe(issued);
    expect(outside.requests).toEqual([]);
  });

  it('refuses a redirect that leaves the platform origin, and the token never leaves', async () => {
    const to = encodeURIComponent(`http://public.example.com:${outside.port}/steal`);
    const result = await gateway.call({
      tool,
      connector: connector(`${platform.origin}/v1/x?to=${to}`),
      arguments: {},
    });
    expect(result).toMatchObject({ ok: false, code: 'api:connectors:address-blocked' });
    expect(outside.requests).toEqual([]);
  });

  it('refuses every Maitento connector when the gateway has no platform configured', async () => {
    const bare = createGateway({ policy: createEgressPolicy() });
    try {
      const result = await bare.call({ tool, connector: connector(`${platform.origin}/v1/knowledge`), arguments: {} });
      expect(result).toMatchObject({ ok: false, code: 'api:connectors:address-blocked' });
    } finally {
      await bare.close();
    }
  });

  describe('a path on the platform (url = "/v1/...")', () => {
    it("is resolved against the gateway's platform origin at call time and signed like any platform call", async () => {
      const result = await gateway.call({ tool, connector: connector('/v1/knowledge?x=1'), arguments: {} });
      expect(result).toMatchObject({ ok: true, body: { knowledge: ['a'] } });
      expect(platform.requests.at(-1)?.url).toBe('/v1/knowledge?x=1');
      expect(platform.requests.at(-1)?.headers.authorization).toBe(`Bearer ${tokensIssued.at(-1)}`);
    });

    it('follows the gateway it is called through: the same connector object on another platform origin', async () => {
      const other = await startRecordingUpstream((_req, res) => json(res, 200, { other: true }));
      const second = createGateway({
        policy: createEgressPolicy(),
        platform: { origin: `http://127.0.0.1:${other.port}`, token: async () => 'second-token' },
      });
      try {
        const shared = connector('/v1/knowledge');
        expect(await gateway.call({ tool, connector: shared, arguments: {} })).toMatchObject({ ok: true });
        expect(await second.call({ tool, connector: shared, arguments: {} })).toMatchObject({
          ok: true,
          body: { other: true },
        });
        expect(other.requests.at(-1)?.headers.authorization).toBe('Bearer second-token');
      } finally {
        await second.close();
        await other.close();
      }
    });

    it('sends nothing when the gateway knows no platform: api:gateway:platform-unset', async () => {
      const bare = createGateway({ policy: createEgressPolicy() });
      try {
        const result = await bare.call({ tool, connector: connector('/v1/knowledge'), arguments: {} });
        expect(result).toMatchObject({ ok: false, code: 'api:gateway:platform-unset' });
      } finally {
        await bare.close();
      }
    });

    it('is no platform call for a connector of another auth', async () => {
      const result = await gateway.call({
        tool,
        connector: { ...connector('/v1/knowledge'), auth: 'None' },
        arguments: {},
      });
      expect(result).toMatchObject({ ok: false, code: 'api:gateway:platform-unset' });
    });
  });
});
