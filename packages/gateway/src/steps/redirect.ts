import type { UrlTemplate } from './build-url.js';

/** Where a redirect sends the call next, and with which method and body. */
export interface RedirectHop {
  url: URL;
  method: string;
  body: string | undefined;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** True for the statuses that are followed as redirects (when they carry a Location). */
export function isRedirect(status: number): boolean {
  return REDIRECTS.has(status);
}

/**
 * Step 8: the next hop of a redirect. 303, and 301/302 after a POST, become a GET without body; 307/308 keep the
 * method and body. Returns undefined when the Location is not an http(s) URL.
 */
export function nextHop(
  status: number,
  location: string,
  current: URL,
  method: string,
  body: string | undefined,
): RedirectHop | undefined {
  let url: URL;
  try {
    url = new URL(location, current);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  url.hash = '';
  const toGet = status === 303 || ((status === 301 || status === 302) && method === 'POST');
  if (toGet) return { url, method: method === 'HEAD' ? 'HEAD' : 'GET', body: undefined };
  return { url, method, body };
}

/**
 * Whether the credential may go with a request to `url`: only to the configured scheme, host and port, and never
 * once the chain has gone from https down to http, even if it comes back.
 */
export function credentialAllowed(url: URL, configured: UrlTemplate, downgraded: boolean): boolean {
  return (
    !downgraded &&
    url.protocol === configured.protocol &&
    url.hostname === configured.hostname &&
    url.port === configured.port
  );
}
