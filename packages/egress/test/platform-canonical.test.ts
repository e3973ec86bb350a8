import { isMtError } from '@maitento/errors';
import {
  authorizeUrl,
  checkConnectorUrl,
  createEgressLookup,
  createEgressPolicy,
  egressPolicyFromEnv,
  isPlatformAddress,
  isPlatformHost,
} from '@maitento/egress';
import { request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { agentFor, closeAgents, type CountingServer, countingServer, refusal, resolverOf } from './helpers.js';

// The platform rule compares canonical addresses: the IPv4 address an IPv6 form carries (IPv4-mapped,
// IPv4-compatible, NAT64, ...), normalised IPv6 text otherwise. Real servers on 127.0.0.1 and ::1 stand
// in for the platform; the test's DNS answers only what its table says.

let v4: CountingServer;
let v6: CountingServer;
let v6Other: CountingServer;
beforeAll(async () => {
  v4 = await countingServer('127.0.0.1', 'platform reached');
  v6 = await countingServer('::1', 'platform reached');
  v6Other = await countingServer('::1', 'platform reached');
});
afterEach(async () => {
  await closeAgents();
  for (const p of [v4, v6, v6Other]) {
    p.connections = 0;
    p.keys = [];
  }
});
afterAll(() => {
  for (const p of [v4, v6, v6Other]) p.server.close();
});

describe('the platform rule on an IPv4 platform host written as IPv6', () => {
  // Loopback is allowed, so only the platform rule stands between a connector and the platform.
  const policy = () => createEgressPolicy({ allow: '127.0.0.1/32', platformHosts: [`127.0.0.1:${v4.port}`] });
  const mappedNames = () =>
    resolverOf({
      'plain.example.test': ['93.184.215.14', '127.0.0.1'],
      'mapped.example.test': ['::ffff:127.0.0.1'],
      'mapped-hex.example.test': ['::ffff:7f00:1'],
      'nat64.example.test': ['64:ff9b::7f00:1'],
    });

  it('the control: without the platform entry the IPv4-mapped literal reaches the server', async () => {
    const open = createEgressPolicy({ allow: '127.0.0.1/32' });
    const url = new URL(`http://[::ffff:127.0.0.1]:${v4.port}/`);
    await expect(authorizeUrl(url, open)).resolves.toHaveLength(1);
    const res = await request(url, { dispatcher: agentFor({ policy: open }) });
    expect(await res.body.text()).toBe('platform reached');
    expect(v4.connections).toBe(1);
  });

  it.each(['[::ffff:127.0.0.1]', '[::ffff:7f00:1]', '[64:ff9b::7f00:1]', '[::127.0.0.1]'])(
    'refuses the literal %s on the platform port at call time',
    async (host) => {
      const error = await refusal(authorizeUrl(new URL(`http://${host}:${v4.port}/`), policy()));
      expect(isMtError(error) && error.code).toBe('api:connectors:address-blocked');
      expect(error.details).toMatchObject({ reason: "the host is the platform's own" });
    },
  );

  it.each(['plain.example.test', 'mapped.example.test', 'mapped-hex.example.test', 'nat64.example.test'])(
    'refuses %s, whose DNS answers include the platform (in some form), at call time, naming the address',
    async (name) => {
      const error = await refusal(authorizeUrl(new URL(`http://${name}:${v4.port}/`), policy(), mappedNames()));
      expect(isMtError(error) && error.code).toBe('api:connectors:address-blocked');
      const answer = (await mappedNames()(name)).at(-1)?.address;
      expect(error.message).toContain(`${name} resolves to ${answer}.`);
      expect(error.details).toMatchObject({ address: answer, reason: "it resolves to the platform's own host" });
    },
  );

  it('refuses the IPv4-mapped literal at connect time: no connection, no credential', async () => {
    const dispatcher = agentFor({ policy: policy() });
    for (const host of ['[::ffff:127.0.0.1]', '[::ffff:7f00:1]']) {
      const error = await refusal(
        request(`http://${host}:${v4.port}/`, { dispatcher, headers: { 'x-api-key': 'sk-live' } }),
      );
      expect(isMtError(error) && error.code, host).toBe('api:connectors:address-blocked');
    }
    expect(v4.connections).toBe(0);
    expect(v4.keys).toEqual([]);
  });

  it('refuses a name answering ::ffff:127.0.0.1 at connect time (the gateway check skipped): no connection, no credential', async () => {
    const dispatcher = agentFor({ policy: policy(), resolver: mappedNames() });
    const error = await refusal(
      request(`http://mapped.example.test:${v4.port}/`, { dispatcher, headers: { 'x-api-key': 'sk-live' } }),
    );
    expect(isMtError(error) && error.code).toBe('api:connectors:address-blocked');
    expect(error.message).toContain('mapped.example.test resolves to ::ffff:127.0.0.1.');
    expect(v4.connections).toBe(0);
    expect(v4.keys).toEqual([]);
  });

  it('a lookup without a port refuses an IPv6 form of the platform on any port', async () => {
    const lookup = createEgressLookup(policy(), mappedNames());
    const [error] = await new Promise<unknown[]>((resolve) =>
      lookup('mapped-hex.example.test', { all: true }, (...args) => resolve(args)),
    );
    expect(isMtError(error) && error.code).toBe('api:connectors:address-blocked');
  });

  it('a platform entry written as an IPv6 form refuses the plain IPv4 address', async () => {
    const entry = createEgressPolicy({ allow: '127.0.0.1/32', platformHosts: [`[::ffff:127.0.0.1]:${v4.port}`] });
    expect(checkConnectorUrl(`http://127.0.0.1:${v4.port}/`, entry)).toMatchObject({ ok: false });
    const error = await refusal(request(`http://127.0.0.1:${v4.port}/`, { dispatcher: agentFor({ policy: entry }) }));
    expect(isMtError(error) && error.code).toBe('api:connectors:address-blocked');
    expect(v4.connections).toBe(0);
  });
});

describe('the platform rule at deploy time, MT_PUBLIC_URL a public IP', () => {
  const policy = egressPolicyFromEnv({ MT_PUBLIC_URL: 'https://93.184.215.14' });

  it.each([
    'https://93.184.215.14/v1',
    'https://[::ffff:93.184.215.14]/v1',
    'https://[::ffff:5db8:d70e]/v1',
    'https://[64:ff9b::5db8:d70e]/v1',
    'http://[64:ff9b::93.184.215.14]:8080/v1',
  ])('refuses %s', (url) => {
    expect(checkConnectorUrl(url, policy)).toMatchObject({
      ok: false,
      code: 'api:connectors:address-blocked',
      reason: "the host is the platform's own",
    });
  });

  it('still accepts the NAT64 form of a neighbouring public address', () => {
    expect(checkConnectorUrl('https://[64:ff9b::5db8:d70f]/v1', policy).ok).toBe(true);
    expect(checkConnectorUrl('https://93.184.215.15/v1', policy).ok).toBe(true);
  });
});

describe('an IPv6 platform host', () => {
  const policy = () => createEgressPolicy({ allow: '::1', platformHosts: [`[::1]:${v6.port}`] });

  it('is refused at connect time as an IP literal, although the allow-list lets ::1 through', async () => {
    const dispatcher = agentFor({ policy: policy() });
    for (const host of ['[::1]', '[0:0:0:0:0:0:0:1]']) {
      const error = await refusal(request(`http://${host}:${v6.port}/`, { dispatcher, headers: { 'x-api-key': 'k' } }));
      expect(isMtError(error) && error.code, host).toBe('api:connectors:address-blocked');
    }
    expect(v6.connections).toBe(0);
    expect(v6.keys).toEqual([]);
    // The control: another ::1 port is not the platform's and is reached through the same agent.
    const res = await request(`http://[::1]:${v6Other.port}/`, { dispatcher });
    expect(await res.body.text()).toBe('platform reached');
    expect(v6Other.connections).toBe(1);
  });

  it('is refused at connect time for a name answering ::1 in any spelling', async () => {
    const resolver = resolverOf({ 'v6.example.test': ['0:0::1'] });
    const dispatcher = agentFor({ policy: policy(), resolver });
    const error = await refusal(request(`http://v6.example.test:${v6.port}/`, { dispatcher }));
    expect(isMtError(error) && error.code).toBe('api:connectors:address-blocked');
    expect(v6.connections).toBe(0);
  });

  it('matches by normalised IPv6 text, bracketed or not', () => {
    const p = createEgressPolicy({ platformHosts: ['[2606:4700:0:0::7]:8080'] });
    expect(isPlatformHost(p, '2606:4700::7', 8080)).toBe(true);
    expect(isPlatformHost(p, '[2606:4700::0:7]', 8080)).toBe(true);
    expect(isPlatformHost(p, '2606:4700::7', 8081)).toBe(false);
    expect(isPlatformAddress(p, '2606:4700:0::7', 8080)).toBe(true);
  });
});
