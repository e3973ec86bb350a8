import { gatewayErrors } from '../errors.js';

/** A connector URL parsed once: the origin, the path split around its `{name}` placeholders, and its own query. */
export interface UrlTemplate {
  /** `scheme://host[:port]` exactly as `new URL()` gives it. */
  readonly origin: string;
  readonly protocol: string;
  readonly hostname: string;
  readonly port: string;
  /** Literal path pieces and placeholder names, alternating, starting with a literal. */
  readonly pieces: readonly string[];
  /** The configured URL's own query without `?` (kept on every call), or ''. */
  readonly search: string;
  /** The configured URL with placeholders left in (`%7Bname%7D`), for address checks of the host. */
  readonly url: URL;
}

const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_-]*)\}/g;
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
// Values made only of unreserved characters (not only dots) need neither decoding checks nor encoding.
const PLAIN = /^[A-Za-z0-9._~-]*[A-Za-z0-9_~-][A-Za-z0-9._~-]*$/;

/** Parses a connector URL once; placeholders may only appear in the path. */
export function compileUrlTemplate(raw: string): UrlTemplate {
  const names: string[] = [];
  // Placeholders become sentinels the URL parser keeps verbatim, so the path is split after parsing.
  const marked = raw.replace(PLACEHOLDER, (_whole, name: string) => {
    names.push(name);
    return `mtplaceholder${names.length - 1}mt`;
  });
  const url = new URL(marked);
  if (url.username || url.password) throw new Error(`connector URL ${raw} carries user info`);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`connector URL ${raw} is not http(s)`);
  const outside = `${url.host}${url.search}${url.hash}`;
  if (/mtplaceholder\d+mt/.test(outside)) throw new Error(`connector URL ${raw} has a placeholder outside its path`);
  const pieces: string[] = [];
  let rest = url.pathname;
  for (let i = 0; i < names.length; i++) {
    const sentinel = `mtplaceholder${i}mt`;
    const at = rest.indexOf(sentinel);
    pieces.push(rest.slice(0, at), names[i]);
    rest = rest.slice(at + sentinel.length);
  }
  pieces.push(rest);
  return {
    origin: url.origin,
    protocol: url.protocol,
    hostname: url.hostname,
    port: url.port,
    pieces,
    search: url.search.slice(1),
    url,
  };
}

// A `.` or `..` segment once the value is split on `/` or `\\`: a server that decodes `%2F` (or normalises after
// decoding, as nginx does before proxying) would otherwise climb out of the configured path.
const DOT_SEGMENT = /(?:^|[/\\])\.{1,2}(?:[/\\]|$)/;
// Overlong UTF-8 forms of `.`, `/` and `\\` that lax decoders still turn into the ASCII character.
const OVERLONG: ReadonlyArray<readonly [RegExp, string]> = [
  [/%c0%ae|%e0%80%ae/gi, '.'],
  [/%c0%af|%e0%80%af/gi, '/'],
  [/%c1%9c|%e0%81%9c/gi, '\\'],
];

/** Decodes every run of valid percent-escapes, leaving malformed ones as they are (as lenient servers do). */
function lenientDecode(text: string): string {
  let out = text;
  for (const [pattern, plain] of OVERLONG) out = out.replace(pattern, plain);
  return out.replace(/(?:%[0-9a-f]{2})+/gi, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return run;
    }
  });
}

/** Why a path value is refused, or undefined when it is safe to substitute. */
export function pathValueProblem(value: string): string | undefined {
  if (value === '') return 'is empty';
  if (PLAIN.test(value)) return undefined;
  let current = value;
  // Decode repeatedly: a server or proxy that decodes twice must not see `..` either. NFKC turns look-alikes such
  // as U+FF0E (fullwidth full stop) and U+2025 (two dot leader) into the dots a normalising server would see.
  for (let round = 0; round < 8; round++) {
    if (CONTROL.test(current)) return 'contains control characters';
    if (DOT_SEGMENT.test(current.normalize('NFKC'))) return 'is or contains a relative path segment (. or ..)';
    const decoded = lenientDecode(current);
    if (decoded === current) return undefined;
    current = decoded;
  }
  return 'is encoded too many times';
}

/** Encodes a path segment value: everything outside the unreserved set is percent-encoded. */
export function encodePathSegment(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** Builds path and query for one call; values are strings already checked against their declared types. */
export function buildPathAndQuery(
  template: UrlTemplate,
  toolName: string,
  path: ReadonlyMap<string, string>,
  query: ReadonlyArray<readonly [string, string]>,
): string {
  let out = template.pieces[0];
  for (let i = 1; i < template.pieces.length; i += 2) {
    const name = template.pieces[i];
    const value = path.get(name);
    if (value === undefined) {
      throw gatewayErrors.create('api:gateway:path-invalid', { tool: toolName, parameter: name, reason: 'is missing' });
    }
    const problem = pathValueProblem(value);
    if (problem !== undefined) {
      throw gatewayErrors.create('api:gateway:path-invalid', { tool: toolName, parameter: name, reason: problem });
    }
    out += (PLAIN.test(value) ? value : encodePathSegment(value)) + template.pieces[i + 1];
  }
  let search = template.search;
  for (const [name, value] of query) {
    search += `${search === '' ? '' : '&'}${encodeURIComponent(name)}=${encodeURIComponent(value)}`;
  }
  // Literal pieces come from the parsed configured path (which starts with `/`) and every value is encoded, so
  // no value can add `/`, `?`, `#` or `\\`: the origin cannot change. Asserted cheaply here, fully in finalUrl.
  if (out.charCodeAt(0) !== 47) throw new Error('a built path must start with /');
  return search === '' ? out : `${out}?${search}`;
}

/** Joins origin and path and checks that nothing moved the call to another origin. */
export function finalUrl(template: UrlTemplate, pathAndQuery: string, toolName: string): URL {
  // Concatenated, not resolved against the origin: a path starting with `//` would otherwise name a host.
  const url = new URL(template.origin + pathAndQuery);
  if (url.origin !== template.origin) {
    throw gatewayErrors.create('api:gateway:path-invalid', {
      tool: toolName,
      parameter: '(any)',
      reason: 'would move the call to another origin',
    });
  }
  return url;
}
