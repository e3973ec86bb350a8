import { isMtError } from '@maitento/errors';
import {
  authorizeUrl,
  createCachingResolver,
  createEgressPolicy,
  pinnedResolver,
  type ResolvedAddress,
  type Resolver,
} from '@maitento/egress';
import { describe, expect, it } from 'vitest';

// A resolver the test controls: the "public internet" of these tests. Nothing here sends traffic.
function fakeResolver(table: Record<string, string[]>): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const resolver = async (hostname: string): Promise<ResolvedAddress[]> => {
    calls.push(hostname);
    const answers = table[hostname];
    if (answers === undefined)
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return answers.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return Object.assign(resolver, { calls });
}

const dns = fakeResolver({
  'api.example.com': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
  'orders.internal.example.com': ['10.1.2.3'],
  'mixed.example.com': ['93.184.215.14', '10.0.0.7'],
  'mixed-last.example.com': ['93.184.215.14', '1.1.1.1', '169.254.169.254'],
  'v6-loopback.example.com': ['2606:4700::1111', '::1'],
  'mapped.example.com': ['::ffff:127.0.0.1'],
  'nat64.example.com': ['64:ff9b::a9fe:a9fe'],
  'nat64-public.example.com': ['64:ff9b::5db8:d70e'],
  'zero.example.com': ['0.0.0.0'],
  'ula.example.com': ['fd00::1'],
  'cgnat.example.com': ['100.100.100.200'],
  'garbage.example.com': ['not-an-ip'],
  'empty.example.com': [],
  'api.example.test': ['127.0.0.1'],
  'alias-of-platform.example.com': ['93.184.215.99'],
});

async function refusal(url: string, policy = createEgressPolicy(), resolver: Resolver = dns): Promise<unknown> {
  try {
    await authorizeUrl(new URL(url), policy, resolver);
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('authorizeUrl', () => {
  it('returns every checked address of a public name', async () => {
    await expect(authorizeUrl(new URL('https://api.example.com/v1'), createEgressPolicy(), dns)).resolves.toEqual([
      { address: '93.184.215.14', family: 4 },
      { address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 },
    ]);
  });

  it.each([
    'http://orders.internal.example.com/orders',
    'http://mixed.example.com/',
    'http://mixed-last.example.com/',
    'http://v6-loopback.example.com/',
    'http://mapped.example.com/',
    'http://nat64.example.com/',
    'http://zero.example.com/',
    'http://ula.example.com/',
    'http://cgnat.example.com/',
    'http://garbage.example.com/',
    'http://api.example.test/',
  ])('refuses %s because one of its answers is not public', async (url) => {
    const error = await refusal(url);
    expect(isMtError(error)).toBe(true);
    if (isMtError(error)) {
      const host = new URL(url).hostname;
      expect(error.code).toBe('api:connectors:address-blocked');
      expect(error.status).toBe(422);
      // The seed's sentence word for word, then the refused answer (the first answer that is not public).
      const refused = { 'mixed.example.com': '10.0.0.7', 'mixed-last.example.com': '169.254.169.254' }[host];
      const answer = refused ?? (await dns(host))[host === 'v6-loopback.example.com' ? 1 : 0].address;
      expect(error.message).toBe(
        `Maitento won't call ${host}: the address isn't on the public internet. Tools can only call public addresses, never localhost, private networks or internal names. ${host} resolves to ${answer}.`,
      );
      expect(error.details).toMatchObject({ host, address: answer });
    }
  });

  it('accepts a NAT64 answer that carries a public IPv4 address', async () => {
    await expect(authorizeUrl(new URL('http://nat64-public.example.com/'), createEgressPolicy(), dns)).resolves.toEqual(
      [{ address: '64:ff9b::5db8:d70e', family: 6 }],
    );
  });

  it('refuses by the static rules before resolving anything', async () => {
    const resolver = fakeResolver({ localhost: ['93.184.215.14'], 'metadata.google.internal': ['93.184.215.14'] });
    for (const url of [
      'http://localhost/',
      'http://metadata.google.internal/',
      'http://127.0.0.1/',
      'http://u:p@api.example.com/',
      'ftp://api.example.com/',
      'http://api.example.com:0/',
    ]) {
      expect(await refusal(url, createEgressPolicy(), resolver), url).toMatchObject({
        code: 'api:connectors:address-blocked',
      });
    }
    expect(resolver.calls).toEqual([]);
  });

  it('checks an IP-literal host without resolving it', async () => {
    const resolver = fakeResolver({});
    await expect(
      authorizeUrl(new URL('http://[2606:4700::1111]:8080/'), createEgressPolicy(), resolver),
    ).resolves.toEqual([{ address: '2606:4700::1111', family: 6 }]);
    expect(await refusal('http://[::ffff:169.254.169.254]/', createEgressPolicy(), resolver)).toMatchObject({
      code: 'api:connectors:address-blocked',
    });
    expect(resolver.calls).toEqual([]);
  });

  it('resolves the name exactly once per call', async () => {
    const resolver = fakeResolver({ 'api.example.com': ['93.184.215.14'] });
    await authorizeUrl(new URL('https://api.example.com/'), createEgressPolicy(), resolver);
    expect(resolver.calls).toEqual(['api.example.com']);
  });

  it('reports a name that does not resolve as api:egress:name-not-resolved, and one with no answers too', async () => {
    expect(await refusal('http://nowhere.example.com/')).toMatchObject({
      code: 'api:egress:name-not-resolved',
      status: 502,
    });
    expect(await refusal('http://empty.example.com/')).toMatchObject({ code: 'api:egress:name-not-resolved' });
  });

  it("refuses a name that resolves to a platform address, and the platform's host by name", async () => {
    const policy = createEgressPolicy({ platformHosts: ['93.184.215.99', 'mt.example.com'] });
    expect(await refusal('https://alias-of-platform.example.com/', policy)).toMatchObject({
      code: 'api:connectors:address-blocked',
    });
    expect(
      await refusal('https://mt.example.com/', policy, fakeResolver({ 'mt.example.com': ['93.184.215.14'] })),
    ).toMatchObject({
      code: 'api:connectors:address-blocked',
    });
  });

  describe('with an allow-list', () => {
    it('lets 127.0.0.1/32 through for a public-looking name, and nothing else', async () => {
      const policy = createEgressPolicy({ allow: '127.0.0.1/32' });
      await expect(authorizeUrl(new URL('http://api.example.test/'), policy, dns)).resolves.toEqual([
        { address: '127.0.0.1', family: 4 },
      ]);
      await expect(authorizeUrl(new URL('http://127.0.0.1:9/'), policy, dns)).resolves.toHaveLength(1);
      await expect(authorizeUrl(new URL('http://[::ffff:127.0.0.1]/'), policy, dns)).resolves.toHaveLength(1);
      for (const url of [
        'http://10.0.0.1/',
        'http://169.254.169.254/',
        'http://127.0.0.2/',
        'http://[::1]/',
        'http://localhost/',
        'http://orders.internal.example.com/',
      ]) {
        expect(await refusal(url, policy), url).toMatchObject({ code: 'api:connectors:address-blocked' });
      }
    });

    it('needs both the name and its addresses allowed for an internal name', async () => {
      const resolver = fakeResolver({ localhost: ['127.0.0.1', '::1'], 'orders.internal': ['10.1.2.3'] });
      const byName = createEgressPolicy({ allow: 'localhost,orders.internal' });
      expect(await refusal('http://localhost:3000/', byName, resolver)).toMatchObject({
        code: 'api:connectors:address-blocked',
      });
      expect(await refusal('http://orders.internal/', byName, resolver)).toMatchObject({
        code: 'api:connectors:address-blocked',
      });
      const byNameAndRange = createEgressPolicy({ allow: 'localhost,127.0.0.1/32,orders.internal,10.1.0.0/16' });
      // ::1 is still not allowed, so localhost (which answers with both) stays refused.
      expect(await refusal('http://localhost:3000/', byNameAndRange, resolver)).toMatchObject({
        code: 'api:connectors:address-blocked',
      });
      await expect(authorizeUrl(new URL('http://orders.internal/'), byNameAndRange, resolver)).resolves.toEqual([
        { address: '10.1.2.3', family: 4 },
      ]);
      const withV6 = createEgressPolicy({ allow: 'localhost,127.0.0.1/32,::1' });
      await expect(authorizeUrl(new URL('http://localhost:3000/'), withV6, resolver)).resolves.toHaveLength(2);
    });
  });
});

describe('resolvers', () => {
  it('a caching resolver answers a second lookup of a name from the first query', async () => {
    const inner = fakeResolver({ 'api.example.com': ['93.184.215.14'] });
    const cached = createCachingResolver(inner, { ttlMs: 60_000 });
    const first = await cached('api.example.com');
    const second = await cached('API.example.com');
    expect(second).toEqual(first);
    expect(inner.calls).toEqual(['api.example.com']);
  });

  it('a caching resolver forgets failures and expires answers', async () => {
    let answer: string[] | undefined;
    const calls: string[] = [];
    const flaky: Resolver = async (name) => {
      calls.push(name);
      if (answer === undefined) throw Object.assign(new Error('nope'), { code: 'EAI_AGAIN' });
      return answer.map((address) => ({ address, family: 4 as const }));
    };
    const cached = createCachingResolver(flaky, { ttlMs: 0 });
    await expect(cached('a.example.com')).rejects.toThrow('nope');
    answer = ['93.184.215.14'];
    await expect(cached('a.example.com')).resolves.toHaveLength(1);
    await cached('a.example.com');
    expect(calls).toHaveLength(3);
  });

  it('a pinned resolver answers its one name with its addresses and fails every other name', async () => {
    const pinned = pinnedResolver('api.example.com', [{ address: '93.184.215.14', family: 4 }]);
    await expect(pinned('api.example.com.')).resolves.toEqual([{ address: '93.184.215.14', family: 4 }]);
    await expect(pinned('other.example.com')).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });
});
