import { createEgressPolicy } from '@maitento/egress';
import { describe, expect, it } from 'vitest';
import { compile } from './helpers.js';

const at = (url: string, auth = '') => ({
  'connectors/open-api/c.mtr': `method = "GET"\nurl = "${url}"\ndescription = "d"\n${auth}`,
});

function hintFor(url: string, options?: Parameters<typeof compile>[1]): string {
  const repo = compile(at(url), options);
  expect(repo.diagnostics.map((d) => d.code)).toEqual(['api:connectors:address-blocked']);
  return repo.diagnostics[0].hint ?? '';
}

describe('the hint of a refused connector address', () => {
  it.each([
    ['http://127.0.0.1:9000/ping', '127.0.0.1'],
    ['http://[::1]:9000/ping', '::1'],
    ['http://10.20.0.5/orders', '10.20.0.5'],
    ['http://orders.internal/orders', 'orders.internal'],
  ])('for %s says the server needs its own MT_EGRESS_ALLOW, with an entry that works', (url, entry) => {
    const hint = hintFor(url);
    expect(hint).toContain(
      `set MT_EGRESS_ALLOW=${entry}${entry.includes('.internal') ? ',<the addresses it resolves to>' : ''} `,
    );
    expect(hint).toContain('in the environment of the Maitento server too, not only of mt check and mt deploy');
    // The entry it suggests is one that lets the URL through.
    expect(compile(at(url), { egress: createEgressPolicy({ allow: entry }) }).diagnostics).toEqual([]);
  });

  it('keeps the reason first', () => {
    expect(hintFor('http://127.0.0.1:9000/ping')).toMatch(
      /^loopback \(127\.0\.0\.0\/8\)\. For a server of your own, set MT_EGRESS_ALLOW=127\.0\.0\.1 in/,
    );
  });

  it('does not suggest the allow-list where it cannot help', () => {
    // A cloud metadata service opens only to an allow-list entry naming exactly its address; no hint suggests one.
    expect(hintFor('http://169.254.169.254/latest/meta-data')).not.toContain('MT_EGRESS_ALLOW');
    const denied = hintFor('http://10.20.0.5/x', { egress: createEgressPolicy({ deny: '10.20.0.0/16' }) });
    expect(denied).not.toContain('MT_EGRESS_ALLOW=');
    const platform = hintFor('http://127.0.0.1:8080/v1', {
      egress: createEgressPolicy({ allow: '127.0.0.1', platformHosts: ['127.0.0.1:8080'] }),
    });
    expect(platform).toBe("the host is the platform's own");
  });

  it.each([
    ['http://169.254.10.1/status', '169.254.10.1'],
    ['http://100.64.1.2/status', '100.64.1.2'],
  ])('suggests an entry for %s, in a range metadata lives in but not a metadata address', (url, entry) => {
    const hint = hintFor(url);
    expect(hint).toMatch(/metadata/); // the range's name mentions it
    expect(hint).toContain(`set MT_EGRESS_ALLOW=${entry} in the environment of the Maitento server too`);
    expect(compile(at(url), { egress: createEgressPolicy({ allow: entry }) }).diagnostics).toEqual([]);
  });

  it.each([
    'http://169.254.169.254/latest/meta-data',
    'http://[::ffff:169.254.169.254]/latest/meta-data',
    'http://100.100.100.200/latest/meta-data',
    'http://169.254.170.2/v2/credentials',
    'http://metadata.google.internal/computeMetadata/v1/',
  ])('still suggests no entry for the metadata service %s', (url) => {
    expect(hintFor(url)).not.toContain('MT_EGRESS_ALLOW');
  });
});
