import { describe, expect, it } from 'vitest';
import { createEgressPolicy } from '../policy/egress-policy.js';
import { checkAddress } from './check-address.js';
import { blockedIpv4Ranges, blockedIpv6Ranges } from './ranges.js';

const policy = createEgressPolicy();

describe('checkAddress', () => {
  it.each([
    ['0.0.0.0', '0.0.0.0/8'],
    ['0.255.255.255', '0.0.0.0/8'],
    ['10.0.0.0', '10.0.0.0/8'],
    ['100.64.0.0', '100.64.0.0/10'],
    ['100.127.255.255', '100.64.0.0/10'],
    ['127.0.0.1', '127.0.0.0/8'],
    ['169.254.169.254', '169.254.0.0/16'],
    ['172.16.0.0', '172.16.0.0/12'],
    ['172.31.255.255', '172.16.0.0/12'],
    ['192.0.0.170', '192.0.0.0/24'],
    ['192.0.2.255', '192.0.2.0/24'],
    ['192.88.99.2', '192.88.99.0/24'],
    ['192.168.255.255', '192.168.0.0/16'],
    ['198.18.0.0', '198.18.0.0/15'],
    ['198.51.100.0', '198.51.100.0/24'],
    ['203.0.113.255', '203.0.113.0/24'],
    ['224.0.0.0', '224.0.0.0/4'],
    ['239.255.255.255', '224.0.0.0/4'],
    ['240.0.0.0', '240.0.0.0/4'],
    ['255.255.255.254', '240.0.0.0/4'],
    ['255.255.255.255', '255.255.255.255/32'],
    ['::', '::/128'],
    ['::1', '::1/128'],
    ['::7f00:1', '::/96'],
    ['::ffff:7f00:1', '::ffff:0:0/96 carrying 127.0.0.0/8'],
    ['::ffff:169.254.169.254', '::ffff:0:0/96 carrying 169.254.0.0/16'],
    ['64:ff9b::a00:1', '64:ff9b::/96 carrying 10.0.0.0/8'],
    ['64:ff9b:1::1', '64:ff9b:1::/48'],
    ['100::', '100::/64'],
    ['2001::', '2001::/32'],
    ['2001:1ff:ffff::1', '2001::/23'],
    ['2001:db8:ffff::1', '2001:db8::/32'],
    ['2002::1', '2002::/16'],
    ['3fff:fff::1', '3fff::/20'],
    ['5f00::1', '5f00::/16'],
    ['fdff::1', 'fc00::/7'],
    ['fe80::1%eth0', 'fe80::/10'],
    ['fec0::1', 'fec0::/10'],
    ['ff0e::1', 'ff00::/8'],
    ['8000::1', 'outside 2000::/3'],
  ])('refuses %s as %s', (ip, range) => {
    expect(checkAddress(ip, policy)).toMatchObject({ ok: false, range });
  });

  it.each([
    '1.1.1.1',
    '8.8.8.8',
    '9.255.255.255',
    '11.0.0.0',
    '100.63.255.255',
    '100.128.0.0',
    '126.255.255.255',
    '128.0.0.0',
    '169.253.255.255',
    '169.255.0.0',
    '172.15.255.255',
    '172.32.0.0',
    '192.0.1.0',
    '192.0.3.0',
    '192.88.98.255',
    '192.167.255.255',
    '192.169.0.0',
    '198.17.255.255',
    '198.20.0.0',
    '223.255.255.255',
    '2606:4700::1111',
    '2001:200::1',
    '2001:db7:ffff::1',
    '2001:db9::1',
    '2003::1',
    '3ffe::1',
    '3fff:1000::1',
    '::ffff:93.184.215.14',
    '64:ff9b::5db8:d70e',
  ])('accepts the public address %s', (ip) => {
    expect(checkAddress(ip, policy)).toEqual({ ok: true });
  });

  it.each([
    '',
    'localhost',
    '127.1',
    '0x7f.0.0.1',
    '2130706433',
    '127.000.000.001',
    '[::1',
    '::1]',
    '1.2.3.4 ',
    'fe80::1%',
  ])('refuses %j, which is not an IP address in canonical form', (ip) => {
    expect(checkAddress(ip, policy)).toMatchObject({ ok: false, range: 'invalid' });
  });

  it('accepts a bracketed IPv6 literal the way URL.hostname writes it', () => {
    expect(checkAddress('[2606:4700::1111]', policy)).toEqual({ ok: true });
    expect(checkAddress('[::1]', policy)).toMatchObject({ ok: false, range: '::1/128' });
  });

  it('refuses the first and the last address of every range in the table', () => {
    for (const { cidr } of [...blockedIpv4Ranges, ...blockedIpv6Ranges]) {
      const [network, prefix] = cidr.split('/');
      expect(checkAddress(network, policy), cidr).toMatchObject({ ok: false });
      const last = lastAddress(network, Number(prefix));
      expect(checkAddress(last, policy), `${cidr} last ${last}`).toMatchObject({ ok: false });
    }
  });

  it('lets an allowed range through and nothing next to it', () => {
    const allowing = createEgressPolicy({ allow: '127.0.0.1/32,fd00::/8' });
    expect(checkAddress('127.0.0.1', allowing)).toEqual({ ok: true });
    expect(checkAddress('::ffff:127.0.0.1', allowing)).toEqual({ ok: true });
    expect(checkAddress('127.0.0.2', allowing)).toMatchObject({ ok: false });
    expect(checkAddress('10.0.0.1', allowing)).toMatchObject({ ok: false });
    expect(checkAddress('169.254.169.254', allowing)).toMatchObject({ ok: false });
    expect(checkAddress('::1', allowing)).toMatchObject({ ok: false });
    expect(checkAddress('fd12::1', allowing)).toEqual({ ok: true });
    expect(checkAddress('fc00::1', allowing)).toMatchObject({ ok: false });
  });
});

function lastAddress(network: string, prefix: number): string {
  if (network.includes(':')) {
    const words = expandIpv6(network);
    let bits = 128 - prefix;
    for (let i = 7; i >= 0 && bits > 0; i--) {
      const take = Math.min(16, bits);
      words[i] |= (1 << take) - 1;
      bits -= take;
    }
    return words.map((w) => w.toString(16)).join(':');
  }
  const value = network.split('.').reduce((acc, octet) => acc * 256 + Number(octet), 0);
  const last = value + 2 ** (32 - prefix) - 1;
  return [24, 16, 8, 0].map((shift) => Math.floor(last / 2 ** shift) % 256).join('.');
}

function expandIpv6(address: string): number[] {
  const [head, tail = ''] = address.split('::');
  const headWords = head === '' ? [] : head.split(':');
  const tailWords = tail === '' ? [] : tail.split(':');
  const zeros = new Array(8 - headWords.length - tailWords.length).fill('0');
  return [...headWords, ...zeros, ...tailWords].map((w) => Number.parseInt(w, 16));
}
