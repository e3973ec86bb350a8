import { createHash } from 'node:crypto';
import { readFile, realpath } from 'node:fs/promises';
import { dirname, posix, resolve as resolvePath, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { upgrade, validate } from '@scalar/openapi-parser';
import { parse as parseYaml } from 'yaml';
import { cliErrors } from '../../errors.js';

/** How much `mt import openapi` reads from a URL, and for how long. */
export interface FetchLimits {
  maxBytes: number;
  timeoutMs: number;
  maxRedirects: number;
}

export const DEFAULT_LIMITS: FetchLimits = { maxBytes: 10 * 1024 * 1024, timeoutMs: 30_000, maxRedirects: 5 };

/** YAML aliases a document may use: a "billion laughs" document is refused instead of expanded. */
const MAX_ALIASES = 100;

/** An OpenAPI document read, validated and upgraded to 3.1. */
export interface LoadedDocument {
  /** The document, as OpenAPI 3.1 (3.0 upgraded, 3.2 read as 3.1). */
  document: Record<string, unknown>;
  /** The version the document declared (`3.0.3`, `3.1.0`, ...). */
  declaredVersion: string;
  /** sha256 of the bytes read: the document's, then those of each document its `$ref`s point at. */
  sha256: string;
  /** The URL it was read from, against which a relative server URL resolves. */
  url?: string;
  warnings: string[];
}

function isUrl(source: string): boolean {
  return /^https?:\/\//i.test(source);
}

function describeSize(bytes: number): string {
  return `${bytes / (1024 * 1024)} MiB`;
}

/** A redirect to another origin than the one a `$ref` may read from. */
class RedirectOutside extends Error {
  constructor(readonly location: string) {
    super(`it redirects to ${location}`);
  }
}

/**
 * Reads a URL with the limits: at most `maxRedirects` redirects, `maxBytes` of body, `timeoutMs` in all. With
 * `origin`, a redirect to any other origin is not followed ({@link RedirectOutside}).
 */
async function fetchText(
  source: string,
  limits: FetchLimits,
  origin?: string,
): Promise<{ bytes: Buffer; url: string }> {
  const signal = AbortSignal.timeout(limits.timeoutMs);
  let url = source;
  try {
    for (let redirects = 0; ; redirects++) {
      const response = await fetch(url, { redirect: 'manual', signal });
      if (response.status >= 300 && response.status < 400 && response.headers.has('location')) {
        await response.body?.cancel();
        if (redirects >= limits.maxRedirects) {
          throw cliErrors.create('api:import:too-many-redirects', { source, limit: limits.maxRedirects });
        }
        const next = new URL(response.headers.get('location') as string, url);
        if (origin !== undefined && next.origin !== origin) throw new RedirectOutside(next.href);
        url = next.toString();
        continue;
      }
      if (!response.ok) {
        await response.body?.cancel();
        throw cliErrors.create('api:import:source-unreadable', {
          source,
          reason: `${url} answered ${response.status} ${response.statusText}`,
        });
      }
      const tooLarge = () =>
        cliErrors.create('api:import:source-too-large', { source, limit: describeSize(limits.maxBytes) });
      const declared = Number(response.headers.get('content-length') ?? Number.NaN);
      if (declared > limits.maxBytes) {
        await response.body?.cancel();
        throw tooLarge();
      }
      const chunks: Buffer[] = [];
      let size = 0;
      if (response.body) {
        for await (const chunk of response.body) {
          size += chunk.byteLength;
          if (size > limits.maxBytes) throw tooLarge();
          chunks.push(Buffer.from(chunk));
        }
      }
      return { bytes: Buffer.concat(chunks), url };
    }
  } catch (error) {
    if (signal.aborted) {
      throw cliErrors.create('api:import:source-timeout', { source, seconds: limits.timeoutMs / 1000 });
    }
    if (error instanceof RedirectOutside) throw error;
    if (error instanceof Error && 'code' in error && String(error.code).startsWith('api:')) throw error;
    throw cliErrors.create('api:import:source-unreadable', { source, reason: (error as Error).message });
  }
}

/** The JSON pointer of a validator error's path. */
function pointer(path: string | string[] | undefined): string {
  if (path === undefined) return '';
  if (typeof path === 'string') return path === '' || path.startsWith('/') ? path : `/${path.replace(/^#\/?/, '')}`;
  return path.map((p) => `/${String(p).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}

/**
 * Reads an OpenAPI document from a file or an http(s) URL: YAML or JSON (YAML with at most 100 aliases),
 * Swagger 2.0 refused, validated (errors at their JSON pointers), 3.0 upgraded to 3.1 and 3.2 read as 3.1.
 */
export async function loadDocument(source: string, limits: FetchLimits = DEFAULT_LIMITS): Promise<LoadedDocument> {
  let bytes: Buffer;
  let url: string | undefined;
  if (isUrl(source)) {
    ({ bytes, url } = await fetchText(source, limits));
  } else {
    try {
      bytes = await readFile(source);
    } catch (error) {
      throw cliErrors.create('api:import:source-unreadable', { source, reason: (error as Error).message });
    }
  }
  const hash = createHash('sha256').update(bytes);
  const raw = parseDocument(source, bytes);
  if (raw.swagger !== undefined) throw cliErrors.create('api:import:swagger-2', { source });
  const declaredVersion = typeof raw.openapi === 'string' ? raw.openapi : '';
  const warnings: string[] = [];
  if (/^3\.2\./.test(declaredVersion)) {
    warnings.push(`${source} is OpenAPI ${declaredVersion}: read as 3.1 (what 3.2 adds is not used)`);
    raw.openapi = '3.1.1';
  }
  if (!/^3\.[01]\./.test(String(raw.openapi))) {
    throw cliErrors.create('api:import:document-invalid', {
      source,
      errors: `openapi is ${JSON.stringify(raw.openapi ?? null)}, not a 3.x version`,
    });
  }
  const base = url !== undefined ? new URL(url) : pathToFileURL(resolvePath(source));
  // A `$ref` reads only inside the document's own folder (its real path: symlinks resolved) or its URL's origin.
  const scope = url !== undefined ? { origin: base.origin } : { folder: await realpath(dirname(resolvePath(source))) };
  await bundleExternalRefs(source, raw, base, scope, limits, hash);
  const sha256 = hash.digest('hex');
  const result = await validate(structuredClone(raw));
  if (!result.valid) {
    const errors = (result.errors ?? []).slice(0, 20).map((e) => `${pointer(e.path) || '/'}: ${e.message}`);
    throw cliErrors.create('api:import:document-invalid', { source, errors: errors.join('; ') });
  }
  const upgraded = upgrade(structuredClone(raw)).specification as unknown as Record<string, unknown> | null;
  if (upgraded === null) {
    throw cliErrors.create('api:import:document-invalid', { source, errors: 'it could not be read as OpenAPI 3.1' });
  }
  return { document: upgraded, declaredVersion, sha256, url, warnings };
}

/** Parses a document's bytes: JSON when it looks like JSON, else YAML with at most 100 aliases; an object. */
function parseDocument(source: string, bytes: Buffer): Record<string, unknown> {
  let parsed: unknown;
  const text = bytes.toString('utf8');
  try {
    // JSON first when it looks like JSON (it has no aliases, and JSON.parse is a thousand times faster than a YAML
    // parser on a large document); YAML, with the alias limit, for anything else.
    parsed = undefined;
    if (/^\s*[{[]/.test(text)) {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
    }
    parsed ??= parseYaml(text, { maxAliasCount: MAX_ALIASES, prettyErrors: true });
  } catch (error) {
    throw cliErrors.create('api:import:document-invalid', { source, errors: (error as Error).message });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw cliErrors.create('api:import:document-invalid', { source, errors: 'it is not a YAML or JSON object' });
  }
  return parsed as Record<string, unknown>;
}

/** Where the documents a `$ref` points at are kept in the root document: `#/x-mt-import-refs/<key>/...`. */
export const EXTERNAL_REFS_KEY = 'x-mt-import-refs';

const escapePointer = (part: string) => part.replace(/~/g, '~0').replace(/\//g, '~1');

/** Whether a `$ref` to `target`, written in a document read from `base`, may be followed: the same file system or host. */
function sameHost(base: URL, target: URL): boolean {
  if (base.protocol === 'file:') return target.protocol === 'file:';
  return target.origin === base.origin;
}

/** Where a document's `$ref`s may read: inside the folder of a file (a real path), or the origin of a URL. */
type RefScope = { folder: string } | { origin: string };

/** Why `target` may not be read from `scope` (the reason for `api:import:ref-outside`), or undefined when it may. */
async function outsideScope(scope: RefScope, target: URL): Promise<string | undefined> {
  if ('origin' in scope) return target.origin === scope.origin ? undefined : `it is not on ${scope.origin}`;
  let real: string;
  try {
    real = await realpath(fileURLToPath(target.href.replace(/#.*$/, '')));
  } catch {
    return undefined; // no such file: reading it says so (api:import:ref-unreadable)
  }
  return real.startsWith(scope.folder.endsWith(sep) ? scope.folder : `${scope.folder}${sep}`)
    ? undefined
    : `it is not inside the document's folder ${scope.folder}`;
}

/**
 * Follows the `$ref`s to other documents: each is resolved against the document it is written in (a file or a URL)
 * and may only point at the same file system or the same host (scheme, host and port); any other is refused
 * (`api:import:ref-external`, exit 2). Within those, a file's `$ref` reads only a file inside the root document's
 * own folder (or below it), checked on the real path after symlinks, and a URL's `$ref` reads only from the root
 * document's origin, a redirect off it not followed; any other is refused (`api:import:ref-outside`, exit 2).
 * Every document read is put under `#/x-mt-import-refs/<key>` of the root document, and each `$ref` rewritten to
 * point there, so the rest of the import sees one document with local references only. Documents are read once
 * each, with the same limits as the root one.
 */
async function bundleExternalRefs(
  source: string,
  root: Record<string, unknown>,
  rootUrl: URL,
  scope: RefScope,
  limits: FetchLimits,
  hash: ReturnType<typeof createHash>,
): Promise<void> {
  const rootHref = new URL('', rootUrl).href.replace(/#.*$/, '');
  const rootDir = posix.dirname(rootUrl.pathname);
  const keys = new Map<string, string>();
  const store: Record<string, unknown> = {};
  const pending: { node: unknown; base: URL; prefix: string; label: string }[] = [
    { node: root, base: rootUrl, prefix: '', label: '' },
  ];
  const load = async (target: URL, ref: string, at: string): Promise<string> => {
    const href = target.href.replace(/#.*$/, '');
    const known = keys.get(href);
    if (known !== undefined) return known;
    const outside = await outsideScope(scope, target);
    if (outside !== undefined)
      throw cliErrors.create('api:import:ref-outside', { source, ref, pointer: at, reason: outside });
    let bytes: Buffer;
    try {
      bytes =
        target.protocol === 'file:'
          ? await readFile(fileURLToPath(href))
          : (await fetchText(href, limits, 'origin' in scope ? scope.origin : undefined)).bytes;
    } catch (error) {
      if (error instanceof RedirectOutside) {
        throw cliErrors.create('api:import:ref-outside', { source, ref, pointer: at, reason: error.message });
      }
      throw cliErrors.create('api:import:ref-unreadable', {
        source,
        ref,
        pointer: at,
        reason: (error as Error).message,
      });
    }
    hash.update(bytes);
    // The key says which document it is, relative to the root one, with no machine's path in it.
    let key = posix.relative(rootDir, decodeURIComponent(target.pathname)) + target.search;
    while ([...keys.values()].includes(key)) key = `${key}~`;
    keys.set(href, key);
    const doc = parseDocument(`${ref} (at ${at} of ${source})`, bytes);
    store[key] = doc;
    pending.push({ node: doc, base: new URL(href), prefix: `/${EXTERNAL_REFS_KEY}/${escapePointer(key)}`, label: key });
    return key;
  };
  const walk = async (node: unknown, base: URL, prefix: string, label: string, at: string): Promise<void> => {
    if (Array.isArray(node)) {
      for (const [i, item] of node.entries()) await walk(item, base, prefix, label, `${at}/${i}`);
      return;
    }
    if (typeof node !== 'object' || node === null) return;
    const object = node as Record<string, unknown>;
    for (const [key, value] of Object.entries(object)) {
      const here = `${at}/${escapePointer(key)}`;
      if (key === '$ref' && typeof value === 'string') {
        const hashAt = value.indexOf('#');
        const location = hashAt < 0 ? value : value.slice(0, hashAt);
        const fragment = hashAt < 0 ? '' : value.slice(hashAt + 1);
        if (location === '') {
          if (prefix !== '') object.$ref = `#${prefix}${fragment}`;
          continue;
        }
        const where = label === '' ? here : `${label}#${here}`;
        let target: URL;
        try {
          target = new URL(location, base);
        } catch {
          throw cliErrors.create('api:import:document-invalid', {
            source,
            errors: `${where}: the $ref ${JSON.stringify(value)} is not a URL or a path`,
          });
        }
        if (!sameHost(base, target)) {
          throw cliErrors.create('api:import:ref-external', { source, ref: value, pointer: where });
        }
        if (target.href.replace(/#.*$/, '') === rootHref) {
          object.$ref = `#${fragment}`;
          continue;
        }
        const stored = await load(target, value, where);
        object.$ref = `#/${EXTERNAL_REFS_KEY}/${escapePointer(stored)}${fragment}`;
        continue;
      }
      // Values under these keys are data, not schemas: a `$ref` there is text.
      if (key === 'example' || key === 'examples' || key === 'enum' || key === 'const' || key === 'default') continue;
      await walk(value, base, prefix, label, here);
    }
  };
  for (let next = pending.shift(); next !== undefined; next = pending.shift()) {
    await walk(next.node, next.base, next.prefix, next.label, '');
  }
  if (keys.size > 0) root[EXTERNAL_REFS_KEY] = store;
}
