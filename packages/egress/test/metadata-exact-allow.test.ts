import { isMtError } from '@maitento/errors';
import {
  authorizeUrl,
  checkAddress,
  checkConnectorUrl,
  checkHostName,
  createEgressLookup,
  createEgressPolicy,
  metadataAddresses,
} from '@maitento/egress';
import { describe, expect, it } from 'vitest';
import { refusal, resolverOf } from './helpers.js';

// A cloud metadata address is reachable only through an allow-list entry naming exactly that address
// (a /32 or /128, in any spelling) or, for a metadata name, exactly that name; never through a wider
// range or a *.suffix entry. MT_EGRESS_DENY wins over all of it. Nothing here opens a socket.

describe('the documented metadata addresses', () => {
  it.each([
    '169.254.169.254',
    '169.254.170.2',
    '169.254.170.23',
    '169.254.0.23',
    '100.100.100.200',
    '192.0.0.192',
    '168.63.129.16',
    'fd00:ec2::254',
    'fd00:ec2::23',
    'fd20:ce::254',
  ])('lists %s', (address) => {
    expect(metadataAddresses.map((m) => m.address)).toContain(address);
  });
});

describe('a wider allow-list range does not reopen a metadata address', () => {
  it.each([
    ['168.63.0.0/16', '168.63.129.16', '168.63.129.17'],
    ['169.254.0.0/16', '169.254.169.254', '169.254.1.1'],
    ['169.254.0.0/16', '169.254.170.2', '169.254.170.3'],
    ['169.254.0.0/16', '169.254.170.23', '169.254.170.24'],
    ['169.254.0.0/16', '169.254.0.23', '169.254.0.24'],
    ['100.64.0.0/10', '100.100.100.200', '100.100.100.201'],
    ['192.0.0.0/24', '192.0.0.192', '192.0.0.193'],
    ['fd00::/8', 'fd00:ec2::254', 'fd00:ec2::255'],
    ['fd00::/8', 'fd00:ec2::23', 'fd00:ec2::24'],
    ['fd20:ce::/32', 'fd20:ce::254', 'fd20:ce::253'],
    ['168.63.129.0/24', '::ffff:168.63.129.16', '::ffff:168.63.129.17'],
    ['169.254.0.0/16', '64:ff9b::a9fe:a9fe', '64:ff9b::a9fe:101'],
    ['::ffff:0:0/96', '::ffff:169.254.169.254', '::ffff:169.254.1.1'],
    ['64:ff9b::/96', '64:ff9b::a83f:8110', '64:ff9b::a83f:8111'],
  ])('allow=%s still refuses %s (and lets the neighbour %s through)', (allow, address, neighbour) => {
    const policy = createEgressPolicy({ allow });
    expect(checkAddress(address, policy)).toMatchObject({ ok: false, reason: expect.stringMatching(/metadata/) });
    expect(checkAddress(neighbour, policy)).toEqual({ ok: true });
  });

  it('refuses at deploy time, call time and connect time alike', async () => {
    const policy = createEgressPolicy({ allow: '169.254.0.0/16,168.63.0.0/16' });
    for (const url of ['http://169.254.169.254/latest/meta-data/', 'http://168.63.129.16/machine?comp=goalstate']) {
      expect(checkConnectorUrl(url, policy), url).toMatchObject({ ok: false, code: 'api:connectors:address-blocked' });
    }
    const dns = resolverOf({ 'imds.example.com': ['169.254.169.254'] });
    const error = await refusal(authorizeUrl(new URL('http://imds.example.com/latest/meta-data/'), policy, dns));
    expect(isMtError(error) && error.code).toBe('api:connectors:address-blocked');
    expect(error.message).toContain('imds.example.com resolves to 169.254.169.254.');
    const lookup = createEgressLookup(policy, dns, 80);
    const [connectError] = await new Promise<unknown[]>((resolve) =>
      lookup('imds.example.com', { all: true }, (...args) => resolve(args)),
    );
    expect(isMtError(connectError) && connectError.code).toBe('api:connectors:address-blocked');
  });
});

describe('an allow-list entry naming exactly the metadata address opens it', () => {
  it.each([
    ['168.63.129.16', '168.63.129.16'],
    ['168.63.129.16/32', '168.63.129.16'],
    ['169.254.169.254', '169.254.169.254'],
    ['169.254.169.254', '::ffff:169.254.169.254'],
    ['169.254.169.254', '64:ff9b::a9fe:a9fe'],
    ['::ffff:a9fe:a9fe', '::ffff:169.254.169.254'],
    ['fd00:ec2::254/128', 'fd00:ec2::254'],
  ])('allow=%s lets %s through', (allow, address) => {
    expect(checkAddress(address, createEgressPolicy({ allow }))).toEqual({ ok: true });
  });

  it('at deploy time and call time', async () => {
    const policy = createEgressPolicy({ allow: '169.254.169.254' });
    expect(checkConnectorUrl('http://169.254.169.254/latest/meta-data/', policy).ok).toBe(true);
    const dns = resolverOf({ 'imds.example.com': ['169.254.169.254'] });
    await expect(authorizeUrl(new URL('http://imds.example.com/'), policy, dns)).resolves.toEqual([
      { address: '169.254.169.254', family: 4 },
    ]);
    // An exact entry opens only that address, not its neighbours in the same range.
    expect(checkAddress('169.254.169.253', policy).ok).toBe(false);
  });

  it('MT_EGRESS_DENY still wins over an exact entry', () => {
    for (const deny of ['169.254.169.254', '169.254.0.0/16', '::ffff:0:0/96']) {
      const policy = createEgressPolicy({ allow: '169.254.169.254', deny });
      expect(checkAddress('::ffff:169.254.169.254', policy), deny).toMatchObject({
        ok: false,
        range: 'MT_EGRESS_DENY',
      });
    }
    const policy = createEgressPolicy({ allow: '169.254.169.254', deny: '169.254.0.0/16' });
    expect(checkAddress('169.254.169.254', policy)).toMatchObject({ ok: false, range: 'MT_EGRESS_DENY' });
    expect(checkConnectorUrl('http://169.254.169.254/', policy).ok).toBe(false);
  });
});

describe('metadata names', () => {
  it.each([
    ['*.google.internal', 'metadata.google.internal'],
    ['*.internal', 'metadata.google.internal'],
    ['*.azure.internal', 'metadata.azure.internal'],
    ['*.tencentyun.com', 'metadata.tencentyun.com'],
    ['*.goog', 'metadata.goog'],
  ])('allow=%s does not lift %s', (allow, name) => {
    const policy = createEgressPolicy({ allow });
    expect(checkHostName(name, policy.allow, policy.deny)).toMatchObject({ ok: false });
    expect(checkConnectorUrl(`http://${name}/`, policy).ok).toBe(false);
  });

  it('an entry naming exactly the name lifts the name rule (its addresses are still judged)', () => {
    const policy = createEgressPolicy({ allow: 'metadata.google.internal' });
    expect(checkHostName('metadata.google.internal', policy.allow, policy.deny)).toEqual({ ok: true });
    // The suffix entry still lifts other names under it.
    const suffix = createEgressPolicy({ allow: '*.google.internal' });
    expect(checkHostName('orders.google.internal', suffix.allow, suffix.deny)).toEqual({ ok: true });
  });

  it('MT_EGRESS_DENY still wins over an exact name entry', () => {
    const policy = createEgressPolicy({ allow: 'metadata.google.internal', deny: '*.google.internal' });
    expect(checkHostName('metadata.google.internal', policy.allow, policy.deny)).toMatchObject({ ok: false });
  });
});
