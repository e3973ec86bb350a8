import type { EgressPolicy } from '../policy/egress-policy.js';
import { checkUrlStatically } from './check-url.js';

/** The result of the deploy-time check of a connector URL. */
export type ConnectorUrlVerdict =
  | { ok: true; url: URL }
  | { ok: false; host: string; reason: string; code: 'api:connectors:address-blocked' };

// C0/C1 controls, format characters (zero-width and direction marks), any whitespace, and backslashes:
// each is a way to make one parser see a different host than another.
const FORBIDDEN_CHARACTERS = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\s\\]/u;

function authorityOf(raw: string): string {
  const match = /^[a-z][a-z0-9+.-]*:[/\\]*([^/?#\\]*)/i.exec(raw);
  return match?.[1] ?? '';
}

/** The host to name in a refusal: what `new URL()` sees when it can parse, stripped of anything unprintable. */
function reportedHost(raw: string): string {
  let host: string;
  try {
    host = new URL(raw).hostname;
  } catch {
    const authority = authorityOf(raw);
    host = authority.slice(authority.lastIndexOf('@') + 1);
  }
  const clean = host.replace(new RegExp(FORBIDDEN_CHARACTERS.source, 'gu'), '').slice(0, 253);
  return clean === '' ? '(no host)' : clean;
}

/**
 * The deploy-time check of a connector URL string: the raw text must be a plain `http(s)://` URL,
 * and the host that `new URL()` produces (never the raw string) must pass every static rule.
 */
export function checkConnectorUrl(url: string, policy: EgressPolicy): ConnectorUrlVerdict {
  const refuse = (host: string, reason: string): ConnectorUrlVerdict => ({
    ok: false,
    host,
    reason,
    code: 'api:connectors:address-blocked',
  });
  if (FORBIDDEN_CHARACTERS.test(url)) {
    return refuse(reportedHost(url), 'the URL contains a control character, whitespace or a backslash');
  }
  if (!/^https?:\/\//i.test(url)) return refuse(reportedHost(url), 'the URL does not start with http:// or https://');
  if (url.includes('#')) return refuse(reportedHost(url), 'a connector URL has no #fragment (it is never sent)');
  if (authorityOf(url).includes('@')) return refuse(reportedHost(url), 'the URL carries user info (user:password@)');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return refuse(reportedHost(url), 'the URL is not a valid absolute URL');
  }
  const verdict = checkUrlStatically(parsed, policy);
  return verdict.ok ? { ok: true, url: parsed } : refuse(verdict.host, verdict.reason);
}
