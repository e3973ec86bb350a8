import { isMtError } from '@maitento/errors';
import ipaddr from 'ipaddr.js';
import { describe, expect, it } from 'vitest';
import { parseAllowList } from './allow-list.js';

function thrown(input: string): unknown {
  try {
    parseAllowList(input);
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('parseAllowList', () => {
  it('is empty by default and allows nothing', () => {
    const allow = parseAllowList(undefined);
    expect(allow.entries).toEqual([]);
    expect(allow.allowsAddress(ipaddr.parse('127.0.0.1'))).toBe(false);
    expect(allow.allowsName('localhost')).toBe(false);
  });

  it('reads CIDRs, single IPs and names, comma-separated with spaces and empty entries ignored', () => {
    const allow = parseAllowList(' 127.0.0.1/32, ::1 ,10.1.0.0/16,,Orders.Internal.,*.test ');
    expect(allow.entries).toEqual(['127.0.0.1/32', '::1/128', '10.1.0.0/16', 'orders.internal', '*.test']);
    expect(allow.allowsAddress(ipaddr.parse('10.1.255.255'))).toBe(true);
    expect(allow.allowsAddress(ipaddr.parse('10.2.0.0'))).toBe(false);
    expect(allow.allowsAddress(ipaddr.parse('::1'))).toBe(true);
    expect(allow.allowsName('orders.internal')).toBe(true);
    expect(allow.allowsName('api.example.test')).toBe(true);
    expect(allow.allowsName('test')).toBe(false);
    expect(allow.allowsName('latest')).toBe(false);
  });

  it('takes an array of entries too', () => {
    expect(parseAllowList(['127.0.0.1', 'a.internal,b.internal']).entries).toEqual([
      '127.0.0.1/32',
      'a.internal',
      'b.internal',
    ]);
  });

  it.each([
    ['10.0.0.0/33', 'prefix length'],
    ['10.0.0.1/8', 'did you mean 10.0.0.0/8'],
    ['0.0.0.0/0', 'every address'],
    ['::/0', 'every address'],
    ['127.1', 'canonical'],
    ['0x7f.0.0.1', 'canonical'],
    ['10.0.0.0/x', 'prefix length'],
    ['localhost:3000', 'ports'],
    ['*', 'wildcard'],
    ['a.*.example', 'wildcard'],
    ['http://orders.internal', 'URL'],
    ['user@host.example', 'character'],
    ['two words', 'character'],
    ['foo.123', 'end in a number'],
    ['-bad.example', 'wildcard'],
  ])('refuses %j with api:egress:invalid-allow-list naming the problem', (entry, fragment) => {
    const error = thrown(entry);
    expect(isMtError(error)).toBe(true);
    if (isMtError(error)) {
      expect(error.code).toBe('api:egress:invalid-allow-list');
      expect(error.status).toBe(400);
      expect(error.message).toContain(entry);
      expect(error.message).toContain(fragment);
    }
  });
});
