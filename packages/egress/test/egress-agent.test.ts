import { isMtError } from '@maitento/errors';
import {
  authorizeUrl,
  createEgressLookup,
  createEgressPolicy,
  egressPolicyFromEnv,
  type Resolver,
} from '@maitento/egress';
import { EnvHttpProxyAgent, request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { agentFor, closeAgents, type CountingServer, countingServer, refusal, resolverOf } from './helpers.js';

let target: CountingServer;
beforeAll(async () => {
  target = await countingServer();
});
afterEach(async () => {
  await closeAgents();
  target.connections = 0;
});
afterAll(() => target.server.close());

describe('createEgressAgent', () => {
  const dns = () => resolverOf({ 'api.example.test': ['127.0.0.1'], 'mixed.example.test': ['127.0.0.1', '10.0.0.1'] });

  it('never opens a connection to a name that resolves to a private address, under the default policy', async () => {
    const policy = egressPolicyFromEnv({});
    const url = `http://api.example.test:${target.port}/`;
    await expect(authorizeUrl(new URL(url), policy, dns())).rejects.toMatchObject({
      code: 'api:connectors:address-blocked',
    });
    // Even when the gateway's own check is skipped, the agent refuses before any socket exists.
    const error = await refusal(request(url, { dispatcher: agentFor({ policy, resolver: dns() }) }));
    expect(isMtError(error) && error.code).toBe('api:connectors:address-blocked');
    expect(target.connections).toBe(0);
  });

  it('reaches the server when MT_EGRESS_ALLOW=127.0.0.1/32 allows it', async () => {
    const policy = egressPolicyFromEnv({ MT_EGRESS_ALLOW: '127.0.0.1/32' });
    const url = new URL(`http://api.example.test:${target.port}/`);
    await expect(authorizeUrl(url, policy, dns())).resolves.toEqual([{ address: '127.0.0.1', family: 4 }]);
    const res = await request(url, { dispatcher: agentFor({ policy, resolver: dns() }) });
    expect(res.statusCode).toBe(200);
    expect(await res.body.text()).toBe('reached');
    expect(target.connections).toBe(1);
  });

  it('refuses a name when any one of its answers is not allowed, with zero connections', async () => {
    const policy = createEgressPolicy({ allow: '127.0.0.1/32' });
    const error = await refusal(
      request(`http://mixed.example.test:${target.port}/`, { dispatcher: agentFor({ policy, resolver: dns() }) }),
    );
    expect(isMtError(error) && error.code).toBe('api:connectors:address-blocked');
    expect(target.connections).toBe(0);
  });

  it.each(['127.0.0.1', '[::ffff:127.0.0.1]', '[::ffff:7f00:1]', '2130706433'])(
    'refuses the IP-literal host %s before connecting, although lookup never sees it',
    async (host) => {
      const dispatcher = agentFor({ policy: createEgressPolicy(), resolver: dns() });
      const error = await refusal(request(`http://${host}:${target.port}/`, { dispatcher }));
      expect(isMtError(error) && error.code).toBe('api:connectors:address-blocked');
      expect(target.connections).toBe(0);
    },
  );

  it('connects to an allowed IP-literal host', async () => {
    const dispatcher = agentFor({ policy: createEgressPolicy({ allow: '127.0.0.1' }) });
    const res = await request(`http://127.0.0.1:${target.port}/`, { dispatcher });
    expect(await res.body.text()).toBe('reached');
    expect(target.connections).toBe(1);
  });

  it('defeats DNS rebinding: a name that was public at check time and private at connect time is refused', async () => {
    const answers = [['93.184.215.14'], ['127.0.0.1']];
    const calls: string[] = [];
    const rebinding: Resolver = async (hostname) => {
      calls.push(hostname);
      const next = answers.shift() ?? ['127.0.0.1'];
      return next.map((address) => ({ address, family: 4 as const }));
    };
    const policy = createEgressPolicy();
    const url = new URL(`http://rebind.example.test:${target.port}/`);
    await expect(authorizeUrl(url, policy, rebinding)).resolves.toEqual([{ address: '93.184.215.14', family: 4 }]);
    const error = await refusal(request(url, { dispatcher: agentFor({ policy, resolver: rebinding }) }));
    expect(isMtError(error) && error.code).toBe('api:connectors:address-blocked');
    expect(calls).toEqual(['rebind.example.test', 'rebind.example.test']);
    expect(target.connections).toBe(0);
  });

  it('refuses an internal name at connect time even if it would resolve to an allowed address', async () => {
    const policy = createEgressPolicy({ allow: '127.0.0.1/32' });
    const resolver = resolverOf({ localhost: ['127.0.0.1'] });
    const error = await refusal(
      request(`http://localhost:${target.port}/`, { dispatcher: agentFor({ policy, resolver }) }),
    );
    expect(isMtError(error) && error.code).toBe('api:connectors:address-blocked');
    expect(target.connections).toBe(0);
  });

  it('does not route through HTTP_PROXY or HTTPS_PROXY, while a proxy-aware agent would', async () => {
    const proxy = await countingServer();
    const names = ['HTTP_PROXY', 'http_proxy', 'HTTPS_PROXY', 'https_proxy', 'NO_PROXY', 'no_proxy'];
    const saved = Object.fromEntries(names.map((name) => [name, process.env[name]]));
    const proxyUrl = `http://127.0.0.1:${proxy.port}`;
    Object.assign(process.env, {
      HTTP_PROXY: proxyUrl,
      http_proxy: proxyUrl,
      HTTPS_PROXY: proxyUrl,
      https_proxy: proxyUrl,
    });
    delete process.env.NO_PROXY;
    delete process.env.no_proxy;
    try {
      const policy = createEgressPolicy({ allow: '127.0.0.1/32' });
      const res = await request(`http://api.example.test:${target.port}/`, {
        dispatcher: agentFor({ policy, resolver: dns() }),
      });
      expect(await res.body.text()).toBe('reached');
      expect(target.connections).toBe(1);
      expect(proxy.connections).toBe(0);
      // The control: undici's env-proxy agent does pick the variable up, so the setup above is live.
      proxy.server.on('connect', (_req, socket) => socket.end('HTTP/1.1 403 Forbidden\r\n\r\n'));
      const envAgent = new EnvHttpProxyAgent();
      try {
        await request(`http://127.0.0.1:${target.port}/`, { dispatcher: envAgent }).then(
          (res) => res.body.text(),
          () => undefined,
        );
      } finally {
        await envAgent.destroy();
      }
      expect(proxy.connections).toBeGreaterThan(0);
      expect(target.connections).toBe(1);
    } finally {
      // Each variable put back in the process's own environment (files share a worker's process).
      for (const name of names) {
        if (saved[name] === undefined) delete process.env[name];
        else process.env[name] = saved[name];
      }
      proxy.server.close();
    }
  });
});

describe('createEgressLookup', () => {
  const policy = createEgressPolicy({ allow: '127.0.0.1/32,::1' });
  const resolver = resolverOf({
    'both.example.test': ['127.0.0.1', '::1'],
    'bad.example.test': ['127.0.0.1', '10.0.0.1'],
  });
  const lookup = createEgressLookup(policy, resolver);
  const call = (host: string, options: object) =>
    new Promise<unknown[]>((resolve) => lookup(host, options, (...args) => resolve(args)));

  it('answers with the whole checked list when net.connect asks for all addresses', async () => {
    expect(await call('both.example.test', { all: true })).toEqual([
      null,
      [
        { address: '127.0.0.1', family: 4 },
        { address: '::1', family: 6 },
      ],
    ]);
  });

  it('answers with one address and its family otherwise, honouring a requested family', async () => {
    expect(await call('both.example.test', {})).toEqual([null, '127.0.0.1', 4]);
    expect(await call('both.example.test', { family: 6 })).toEqual([null, '::1', 6]);
  });

  it('fails with address-blocked when any answer is not allowed', async () => {
    const [error] = await call('bad.example.test', { all: true });
    expect(isMtError(error) && error.code).toBe('api:connectors:address-blocked');
  });
});

describe("the platform's own host at connect time", () => {
  // The platform listens on 127.0.0.1:<target.port>; the allow-list lets loopback through, so only the
  // platform rule stands between a connector and the platform's API.
  const platformPolicy = () =>
    createEgressPolicy({ allow: '127.0.0.1/32', platformHosts: [`127.0.0.1:${target.port}`] });

  it('refuses a name that answered a public address when checked and the platform when connecting; the credential is never sent', async () => {
    const answers = [['93.184.215.14'], ['127.0.0.1']];
    const rebinding: Resolver = async () =>
      (answers.shift() ?? ['127.0.0.1']).map((address) => ({ address, family: 4 as const }));
    const policy = platformPolicy();
    const url = new URL(`http://rebind.example.test:${target.port}/`);
    await expect(authorizeUrl(url, policy, rebinding)).resolves.toEqual([{ address: '93.184.215.14', family: 4 }]);
    const seen: (string | undefined)[] = [];
    const onRequest = (req: { headers: Record<string, string | undefined> }) => seen.push(req.headers['x-api-key']);
    target.server.on('request', onRequest);
    try {
      const error = await refusal(
        request(url, { dispatcher: agentFor({ policy, resolver: rebinding }), headers: { 'x-api-key': 'sk-live' } }),
      );
      expect(isMtError(error) && error.code).toBe('api:connectors:address-blocked');
      expect(target.connections).toBe(0);
      expect(seen).toEqual([]);
    } finally {
      target.server.off('request', onRequest);
    }
  });

  it("refuses the platform's own IP literal and port at connect time, although the allow-list lets the address through", async () => {
    const dispatcher = agentFor({ policy: platformPolicy() });
    const error = await refusal(request(`http://127.0.0.1:${target.port}/`, { dispatcher }));
    expect(isMtError(error) && error.code).toBe('api:connectors:address-blocked');
    expect(target.connections).toBe(0);
  });

  it('still reaches another port of the same address when the platform entry names a port', async () => {
    const other = await countingServer();
    try {
      const policy = platformPolicy();
      const dispatcher = agentFor({ policy, resolver: resolverOf({ 'api.example.test': ['127.0.0.1'] }) });
      const res = await request(`http://api.example.test:${other.port}/`, { dispatcher });
      expect(await res.body.text()).toBe('reached');
      expect(other.connections).toBe(1);
    } finally {
      other.server.close();
    }
  });

  it('a lookup made without a port refuses a name resolving to a platform host on any port', async () => {
    const lookup = createEgressLookup(platformPolicy(), resolverOf({ 'api.example.test': ['127.0.0.1'] }));
    const [error] = await new Promise<unknown[]>((resolve) =>
      lookup('api.example.test', { all: true }, (...args) => resolve(args)),
    );
    expect(isMtError(error) && error.code).toBe('api:connectors:address-blocked');
  });
});
