import { checkLimit } from './limit-checks.js';
import { RESERVED_HEADERS } from './reserved-headers.js';
import type { Connector } from './resources.js';
import { type Reporter, spanInString } from './report.js';
import { keySpanOf, rawOf, spanOf, type ValueTree } from './value-tree.js';

/** The `{name}` path placeholders of a connector URL, in order. */
export function urlPlaceholders(url: string): string[] {
  return [...url.matchAll(/\{([^{}]*)\}/g)].map((m) => m[1]);
}

/** The URL with every `{name}` replaced by a harmless value, as judged by the address rules. */
export function urlWithSampleParameters(url: string): string {
  return url.replace(/\{[^{}]*\}/g, 'x');
}

/**
 * Whether `url` names a path on the platform (`/v1/...`) rather than a full URL: allowed only for
 * `auth = "Maitento"`, resolved against the platform's own URL at call time.
 */
export function isPlatformPath(url: string): boolean {
  return url.startsWith('/') && !url.startsWith('//');
}

/** The origin a platform path is judged against where no platform URL is known (only the path is checked). */
export const SAMPLE_PLATFORM_ORIGIN = 'http://platform.invalid';

/** The first `{name}` placeholder of `url` that stands in its scheme, host, port, query or fragment, if any. */
export function placeholderOutsidePath(url: string): { placeholder: string; part: string } | undefined {
  const authority = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/.exec(url)?.[0] ?? '';
  const inAuthority = /\{[^{}]*\}/.exec(authority);
  if (inAuthority) return { placeholder: inAuthority[0], part: 'host' };
  const rest = url.slice(authority.length);
  const tailAt = rest.search(/[?#]/);
  if (tailAt >= 0) {
    const inTail = /\{[^{}]*\}/.exec(rest.slice(tailAt));
    if (inTail) return { placeholder: inTail[0], part: rest[tailAt] === '?' ? 'query' : 'fragment' };
  }
  return undefined;
}

function checkUnique(
  connector: Connector,
  tree: ValueTree,
  where: 'path' | 'query' | 'header',
  reporter: Reporter,
): void {
  const seen = new Map<string, number>();
  (connector.parameters[where] ?? []).forEach((p, i) => {
    // Header names are case-insensitive: X-Id and x-id are one header.
    const key = where === 'header' ? p.name.toLowerCase() : p.name;
    const first = seen.get(key);
    if (first === undefined) {
      seen.set(key, i);
      return;
    }
    reporter.report(
      'mtr:names:duplicate',
      {
        what: `parameters.${where}`,
        name: p.name,
        line: spanOf(tree, ['parameters', where, first, 'name']).start.line,
      },
      tree.file,
      spanOf(tree, ['parameters', where, i, 'name']),
    );
  });
}

/** Checks a connector's URL (an MCP connector's has no placeholders), its path placeholders against `parameters.path` both ways, and unique parameter names. */
export function checkConnector(connector: Connector, tree: ValueTree, reporter: Reporter): void {
  checkLimit(connector.limit, tree, reporter);
  // Positions are looked up only to report: most connectors need none.
  const urlSpan = () => spanOf(tree, ['url']);
  // A placeholder outside the path would let a call choose the host (or add query text the gateway does not
  // build): the address is judged here, once, so the host and port must be fixed.
  if (connector.mcp !== undefined) {
    // An MCP server's endpoint is one fixed address: nothing of a call may change it.
    const placeholder = /\{[^{}]*\}/.exec(connector.url)?.[0];
    if (placeholder !== undefined) {
      reporter.report(
        'mtr:url:invalid',
        { detail: `has the placeholder ${placeholder}; an MCP connector's url is fixed, it has no path parameters` },
        tree.file,
        spanInString(urlSpan(), rawOf(tree, ['url']), placeholder, 0),
      );
    }
  }
  // A path on the platform (`url = "/v1/..."`): only a platform tool (auth = "Maitento", not MCP) may name one; its
  // path is checked as a full URL's would be, on a sample origin.
  const platformPath = isPlatformPath(connector.url);
  if (platformPath && (connector.auth !== 'Maitento' || connector.mcp !== undefined)) {
    reporter.report(
      'mtr:url:path-only',
      {
        url: connector.url,
        why:
          connector.mcp !== undefined
            ? "an MCP connector's url is its server's full address"
            : `auth = "${connector.auth}" calls another host, whose address the url must name`,
      },
      tree.file,
      urlSpan(),
    );
    return;
  }
  const outsidePath = connector.mcp === undefined ? placeholderOutsidePath(connector.url) : undefined;
  if (outsidePath !== undefined) {
    reporter.report(
      'mtr:url:invalid',
      {
        detail: `has the placeholder ${outsidePath.placeholder} in its ${outsidePath.part}; path parameters may only stand in the path`,
      },
      tree.file,
      spanInString(urlSpan(), rawOf(tree, ['url']), outsidePath.placeholder, 0),
    );
  }
  let parsed: URL | undefined;
  try {
    const full = platformPath ? SAMPLE_PLATFORM_ORIGIN + connector.url : connector.url;
    parsed = new URL(urlWithSampleParameters(full));
  } catch {
    // A placeholder in the port also makes the URL unparsable; it was reported above, once.
    if (outsidePath === undefined && !(connector.mcp !== undefined && /\{[^{}]*\}/.test(connector.url)))
      reporter.report(
        'mtr:url:invalid',
        { detail: `${JSON.stringify(connector.url)} is not a URL` },
        tree.file,
        urlSpan(),
      );
  }
  if (parsed && parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    reporter.report(
      'mtr:url:invalid',
      { detail: `must be http or https, not ${parsed.protocol}` },
      tree.file,
      urlSpan(),
    );
  }
  if (parsed?.username || parsed?.password) {
    reporter.report(
      'mtr:url:invalid',
      { detail: 'must not carry a user name or password; use auth = "Header" and a secret' },
      tree.file,
      urlSpan(),
    );
  }

  checkOAuth2(connector, tree, reporter);
  if (connector.mcp !== undefined) return;
  const declared = new Set(connector.parameters.path.map((p) => p.name));
  const placeholders = urlPlaceholders(connector.url);
  const counts = new Map<string, number>();
  for (const name of placeholders) {
    const needle = `{${name}}`;
    const occurrence = counts.get(needle) ?? 0;
    counts.set(needle, occurrence + 1);
    if (declared.has(name)) continue;
    const span = spanInString(urlSpan(), rawOf(tree, ['url']), needle, occurrence);
    if (!/^[A-Za-z_][A-Za-z0-9_-]*$/.test(name)) {
      reporter.report(
        'mtr:url:invalid',
        { detail: `has the placeholder ${needle}, which is no name` },
        tree.file,
        span,
      );
    } else {
      reporter.report('mtr:path:undeclared', { name }, tree.file, span);
    }
  }
  const used = new Set(placeholders);
  connector.parameters.path.forEach((p, i) => {
    if (!used.has(p.name)) {
      reporter.report('mtr:path:unused', { name: p.name }, tree.file, spanOf(tree, ['parameters', 'path', i, 'name']));
    }
  });
  checkUnique(connector, tree, 'path', reporter);
  checkUnique(connector, tree, 'query', reporter);
  checkUnique(connector, tree, 'header', reporter);
  checkHeaderParameters(connector, tree, reporter);
}

function checkHeaderParameters(connector: Connector, tree: ValueTree, reporter: Reporter): void {
  (connector.parameters.header ?? []).forEach((p, i) => {
    const reason = Object.hasOwn(RESERVED_HEADERS, p.name.toLowerCase())
      ? RESERVED_HEADERS[p.name.toLowerCase()]
      : undefined;
    if (reason === undefined) return;
    reporter.report(
      'mtr:header:reserved',
      { name: p.name, reason, hint: 'remove it from parameters.header' },
      tree.file,
      spanOf(tree, ['parameters', 'header', i, 'name']),
    );
  });
}

/** `provider` exactly with auth = "OAuth2", and `scopes` and `grant` only with it. */
function checkOAuth2(connector: Connector, tree: ValueTree, reporter: Reporter): void {
  if (connector.auth === 'OAuth2') {
    if (connector.provider === undefined) {
      reporter.report(
        'mtr:connector:oauth2',
        {
          detail: 'a connector with auth = "OAuth2" names the auth provider of its connections',
          hint: 'add provider = @ref("<auth provider>") (a file of auth-providers/)',
        },
        tree.file,
        keySpanOf(tree, ['auth']),
      );
    }
    return;
  }
  for (const key of ['provider', 'scopes', 'grant'] as const) {
    if (connector[key] === undefined) continue;
    reporter.report(
      'mtr:connector:oauth2',
      {
        detail: `${key} is only for auth = "OAuth2", and this connector has auth = "${connector.auth}"`,
        hint: `set auth = "OAuth2", or remove ${key}`,
      },
      tree.file,
      keySpanOf(tree, [key]),
    );
  }
}
