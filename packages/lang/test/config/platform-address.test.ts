import { createEgressPolicy, egressPolicyFromEnv } from '@maitento/egress';
import { describe, expect, it } from 'vitest';
import { compile } from './helpers.js';

// The deploy-time address rule of a connector, as `mt check` and `mt deploy` apply it.
const at = (url: string) => ({ 'connectors/open-api/c.mtr': `method = "GET"\nurl = "${url}"\ndescription = "d"\n` });
const codes = (url: string, egress: ReturnType<typeof createEgressPolicy>) =>
  compile(at(url), { egress }).diagnostics.map((d) => [d.code, d.hint]);

describe("the platform's own host at deploy time, in any spelling", () => {
  const egress = egressPolicyFromEnv({ MT_PUBLIC_URL: 'https://93.184.215.14' });

  it.each([
    'https://93.184.215.14/v1',
    'https://[::ffff:93.184.215.14]/v1',
    'https://[::ffff:5db8:d70e]/v1',
    'https://[64:ff9b::5db8:d70e]/v1',
  ])('refuses %s', (url) => {
    expect(codes(url, egress)).toEqual([['api:connectors:address-blocked', "the host is the platform's own"]]);
  });

  it('accepts a neighbouring public address', () => {
    expect(codes('https://[64:ff9b::5db8:d70f]/v1', egress)).toEqual([]);
  });

  it('refuses an IPv6 platform host written differently', () => {
    const v6 = createEgressPolicy({ allow: '::1', platformHosts: ['[0:0::1]:8080'] });
    expect(codes('http://[::1]:8080/v1', v6)).toEqual([
      ['api:connectors:address-blocked', "the host is the platform's own"],
    ]);
    expect(codes('http://[::1]:8081/v1', v6)).toEqual([]);
  });
});

describe('cloud metadata at deploy time', () => {
  it('a wider allow-list range does not open a metadata address, and the hint suggests no entry', () => {
    const egress = createEgressPolicy({ allow: '169.254.0.0/16,168.63.0.0/16' });
    for (const url of ['http://169.254.169.254/latest/meta-data/', 'http://168.63.129.16/machine']) {
      const [[code, hint]] = codes(url, egress);
      expect(code, url).toBe('api:connectors:address-blocked');
      expect(hint, url).toMatch(/metadata/);
      expect(hint, url).not.toContain('MT_EGRESS_ALLOW');
    }
    expect(codes('http://169.254.1.1/x', egress)).toEqual([]);
  });

  it.each([
    'http://168.63.129.16/machine',
    'http://[::ffff:168.63.129.16]/machine',
    'http://169.254.170.23/v1/credentials',
    'http://metadata.google.internal/computeMetadata/v1/',
  ])('the hint for %s suggests no allow-list entry, under the default policy too', (url) => {
    const [[code, hint]] = codes(url, createEgressPolicy());
    expect(code).toBe('api:connectors:address-blocked');
    expect(hint).not.toContain('MT_EGRESS_ALLOW');
  });

  it('an entry naming exactly the address opens it', () => {
    expect(codes('http://169.254.169.254/latest/meta-data/', createEgressPolicy({ allow: '169.254.169.254' }))).toEqual(
      [],
    );
  });
});
