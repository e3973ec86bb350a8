import type { GatewayOptions } from '@maitento/gateway';
import { issuePlatformToken, type SecretKeys } from '@maitento/store';

/**
 * The gateway option for auth = "Maitento" connectors: calls to `origin` carry a platform token of the
 * namespace the call is made for, signed with `keys`; no option when there is no origin.
 */
export function platformCalls(origin: string | undefined, keys: SecretKeys): Pick<GatewayOptions, 'platform'> {
  if (!origin) return {};
  return {
    platform: {
      origin,
      token: async ({ caller }) => {
        if (caller === undefined) throw new Error('a platform call needs the namespace it is made for');
        return issuePlatformToken(keys, caller);
      },
    },
  };
}
