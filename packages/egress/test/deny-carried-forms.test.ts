import { isMtError } from '@maitento/errors';
import { authorizeUrl, checkAddress, checkConnectorUrl, createEgressPolicy } from '@maitento/egress';
import { describe, expect, it } from 'vitest';
import { refusal, resolverOf } from './helpers.js';

// 93.184.215.14 written in the IPv6 forms that carry it and that the IPv6 table refuses outright, so
// only an IPv6 allow entry covering the form lets them through.
const forms = [
  ['6to4', '2002:5db8:d70e::1', '2002::/16'],
  ['SIIT', '::ffff:0:5db8:d70e', '::ffff:0:0:0/96'],
] as const;

describe('MT_EGRESS_DENY and the IPv6 forms carrying a denied IPv4 address', () => {
  it.each(forms)(
    'refuses the %s form %s of a denied address although an IPv6 allow entry covers it',
    (_, address, allow) => {
      const policy = createEgressPolicy({ allow, deny: '93.184.215.14' });
      expect(checkAddress(address, policy)).toMatchObject({ ok: false, range: 'MT_EGRESS_DENY' });
      expect(checkConnectorUrl(`https://[${address}]/`, policy)).toMatchObject({
        ok: false,
        code: 'api:connectors:address-blocked',
      });
    },
  );

  it.each(forms)(
    'refuses a name answering the %s form %s of a denied address at call time',
    async (_, address, allow) => {
      const policy = createEgressPolicy({ allow, deny: '93.184.215.0/24' });
      const dns = resolverOf({ 'shop.example.com': [address] });
      const error = await refusal(authorizeUrl(new URL('https://shop.example.com/'), policy, dns));
      expect(isMtError(error) && error.code).toBe('api:connectors:address-blocked');
      expect(error.details).toMatchObject({ address, reason: expect.stringContaining('MT_EGRESS_DENY') });
    },
  );

  it.each(forms)(
    'lets the %s form %s through when the deny list does not name what it carries',
    (_, address, allow) => {
      const policy = createEgressPolicy({ allow, deny: '93.184.216.0/24' });
      expect(checkAddress(address, policy)).toEqual({ ok: true });
    },
  );
});
