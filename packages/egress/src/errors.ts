import { defineErrors, type MtError } from '@maitento/errors';

/** The error registry of `@maitento/egress`. */
export const egressErrors = defineErrors({
  'api:connectors:address-blocked': {
    status: 422,
    message:
      "Maitento won't call {host}: the address isn't on the public internet. Tools can only call public addresses, never localhost, private networks or internal names.",
  },
  'api:egress:invalid-allow-list': {
    status: 400,
    message: 'MT_EGRESS_ALLOW entry "{entry}" is not valid: {reason}.',
    hint: 'Write comma-separated CIDRs (10.1.0.0/16, fd00::/8), single IPs (127.0.0.1) or host names (orders.internal, *.corp.example).',
  },
  'api:egress:invalid-deny-list': {
    status: 400,
    message: 'MT_EGRESS_DENY entry "{entry}" is not valid: {reason}.',
    hint: 'Write comma-separated CIDRs (203.0.113.0/24), single IPs (168.63.129.16) or host names (api.example.com, *.example.net).',
  },
  'api:egress:invalid-platform-host': {
    status: 400,
    message: 'Platform host "{entry}" is not valid: {reason}.',
    hint: 'MT_PLATFORM_HOSTS takes comma-separated host names or IPs, each optionally with :port; MT_PUBLIC_URL takes an absolute http(s) URL.',
  },
  'api:egress:name-not-resolved': {
    status: 502,
    message: 'Maitento could not resolve {host}: {reason}.',
    hint: 'Check the host name in the connector URL and that the name exists in public DNS. To try a tool offline, `MT_RESOLVE=HOST=IP mt extop-call ... --dry-run` gives the name a fixed address (the address rules still apply).',
  },
});

/**
 * The `api:connectors:address-blocked` error for `host`, with an optional secret-free reason in its details;
 * given the refused `address` a name resolved to, the message ends by naming it.
 */
export function addressBlockedError(
  host: string,
  reason?: string,
  address?: string,
): MtError<'api:connectors:address-blocked'> {
  const error = egressErrors.create('api:connectors:address-blocked', { host });
  if (reason === undefined && address === undefined) return error;
  // The registry's sentence comes first, word for word; the resolved address is appended, never swapped in.
  const message = address === undefined ? error.message : `${error.message} ${host} resolves to ${address}.`;
  return egressErrors.create(
    'api:connectors:address-blocked',
    { host },
    {
      message,
      details: { host, ...(reason === undefined ? {} : { reason }), ...(address === undefined ? {} : { address }) },
    },
  );
}
