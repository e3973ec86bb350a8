import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isMtError } from '@maitento/errors';
import {
  authorizeUrl,
  blockedMetadataRanges,
  checkAddress,
  checkConnectorUrl,
  createEgressAgent,
  createEgressPolicy,
  egressPolicyFromEnv,
} from '@maitento/egress';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { refusal, resolverOf } from './helpers.js';

describe('cloud metadata services in public ranges', () => {
  it('lists Azure WireServer (168.63.129.16), the one documented metadata address in a public range', () => {
    expect(blockedMetadataRanges.map((range) => range.cidr)).toContain('168.63.129.16/32');
  });

  it.each([
    ['168.63.129.16', '168.63.129.16/32'],
    ['::ffff:168.63.129.16', '::ffff:0:0/96 carrying 168.63.129.16/32'],
    ['64:ff9b::a83f:8110', '64:ff9b::/96 carrying 168.63.129.16/32'],
  ])('refuses %s at call time', (address, range) => {
    expect(checkAddress(address, createEgressPolicy())).toMatchObject({ ok: false, range });
  });

  it.each(['168.63.129.15', '168.63.129.17'])('still allows the public neighbour %s', (address) => {
    expect(checkAddress(address, createEgressPolicy())).toEqual({ ok: true });
  });

  // Every other metadata address the major clouds document already lies in a refused special-purpose range.
  it.each([
    '169.254.169.254', // AWS, GCP, Azure IMDS, OCI, DigitalOcean, OpenStack, Hetzner
    '169.254.170.2', // AWS ECS task metadata
    'fd00:ec2::254', // AWS IMDS over IPv6
    'fd20:ce::254', // GCP metadata over IPv6
    '100.100.100.200', // Alibaba Cloud
    '192.0.0.192', // Oracle Cloud (legacy)
    '169.254.0.23', // Tencent Cloud
  ])('refuses the metadata address %s', (address) => {
    expect(checkAddress(address, createEgressPolicy()).ok).toBe(false);
  });

  it('refuses a connector URL naming WireServer at deploy time', () => {
    expect(checkConnectorUrl('http://168.63.129.16/machine?comp=goalstate', createEgressPolicy())).toMatchObject({
      ok: false,
      code: 'api:connectors:address-blocked',
    });
  });

  it('refuses a name resolving to WireServer at call time, and the refusal names the address it resolved to', async () => {
    const dns = resolverOf({ 'wire.example.com': ['93.184.215.14', '168.63.129.16'] });
    const error = await refusal(authorizeUrl(new URL('http://wire.example.com/'), createEgressPolicy(), dns));
    expect(isMtError(error) && error.code).toBe('api:connectors:address-blocked');
    expect(error.message).toMatch(/^Maitento won't call wire\.example\.com: the address isn't on the public internet/);
    expect(error.message).toContain('wire.example.com resolves to 168.63.129.16');
    expect(error.details).toMatchObject({ address: '168.63.129.16' });
  });
});

describe('MT_EGRESS_DENY', () => {
  const env = {
    MT_EGRESS_ALLOW: '127.0.0.1/32,orders.internal,*.corp.example',
    MT_EGRESS_DENY: '93.184.215.0/24, 127.0.0.1 ,api.bad.example,*.evil.example,orders.internal,legacy.corp.example',
  };
  const policy = egressPolicyFromEnv(env);

  it('reads the deny list from the environment', () => {
    expect(policy.deny.entries).toEqual([
      '93.184.215.0/24',
      '127.0.0.1/32',
      'api.bad.example',
      '*.evil.example',
      'orders.internal',
      'legacy.corp.example',
    ]);
  });

  it.each([
    'https://api.bad.example/v1',
    'https://x.evil.example/',
    'https://a.b.evil.example/',
    'https://93.184.215.14/',
    'http://[::ffff:93.184.215.14]/',
  ])('refuses %s at deploy time', (url) => {
    expect(checkConnectorUrl(url, policy)).toMatchObject({ ok: false, code: 'api:connectors:address-blocked' });
  });

  it.each(['http://127.0.0.1:8080/', 'http://orders.internal/', 'http://legacy.corp.example/'])(
    'wins over MT_EGRESS_ALLOW: %s is refused although the allow-list names it',
    (url) => {
      expect(checkConnectorUrl(url, policy)).toMatchObject({ ok: false });
      expect(checkConnectorUrl(url, egressPolicyFromEnv({ MT_EGRESS_ALLOW: env.MT_EGRESS_ALLOW })).ok).toBe(true);
    },
  );

  it('leaves what it does not name alone', () => {
    expect(checkConnectorUrl('https://evil.example/', policy).ok).toBe(true);
    expect(checkConnectorUrl('https://93.184.216.1/', policy).ok).toBe(true);
  });

  it('refuses a public name resolving into a denied range at call time, naming the address', async () => {
    const dns = resolverOf({ 'shop.example.com': ['93.184.215.14'] });
    const error = await refusal(authorizeUrl(new URL('https://shop.example.com/'), policy, dns));
    expect(isMtError(error) && error.code).toBe('api:connectors:address-blocked');
    expect(error.message).toContain('shop.example.com resolves to 93.184.215.14');
    expect(error.details).toMatchObject({ reason: expect.stringContaining('MT_EGRESS_DENY') });
  });

  it('refuses a bad entry with api:egress:invalid-deny-list', () => {
    for (const entry of ['10.0.0.1/8', 'http://x.example', 'host:80', '*', 'a.*.example']) {
      expect(() => egressPolicyFromEnv({ MT_EGRESS_DENY: entry }), entry).toThrow(
        expect.objectContaining({ code: 'api:egress:invalid-deny-list', status: 400 }),
      );
    }
  });

  it('is applied by the egress agent at connect time: no socket opens to a denied address the allow-list lets through', async () => {
    let connections = 0;
    const server = createServer((_req, res) => res.end('reached'));
    server.on('connection', () => {
      connections += 1;
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const port = (server.address() as AddressInfo).port;
    const resolver = resolverOf({ 'api.example.test': ['127.0.0.1'] });
    const allowOnly = createEgressAgent({ policy: createEgressPolicy({ allow: '127.0.0.1' }), resolver });
    const denied = createEgressAgent({
      policy: createEgressPolicy({ allow: '127.0.0.1', deny: '127.0.0.1' }),
      resolver,
    });
    try {
      // The control: without the deny list the same request reaches the server.
      const ok = await request(`http://api.example.test:${port}/`, { dispatcher: allowOnly });
      expect(await ok.body.text()).toBe('reached');
      expect(connections).toBe(1);
      for (const url of [`http://api.example.test:${port}/`, `http://127.0.0.1:${port}/`]) {
        const error = await refusal(request(url, { dispatcher: denied }));
        expect(isMtError(error) && error.code, url).toBe('api:connectors:address-blocked');
      }
      expect(connections).toBe(1);
    } finally {
      await Promise.all([allowOnly.close(), denied.close()]);
      server.close();
    }
  });
});
