import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
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
  /** sha256 of the bytes read. */
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

/** Reads a URL with the limits: at most `maxRedirects` redirects, `maxBytes` of body, `timeoutMs` in all. */
async function fetchText(source: string, limits: FetchLimits): Promise<{ bytes: Buffer; url: string }> {
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
        url = new URL(response.headers.get('location') as string, url).toString();
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
  const sha256 = createHash('sha256').update(bytes).digest('hex');
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
  const raw = parsed as Record<string, unknown>;
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
  findExternalRefs(source, raw, '');
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

/** Refuses a `$ref` to another document: only references inside the document are followed. */
function findExternalRefs(source: string, node: unknown, at: string): void {
  if (Array.isArray(node)) {
    for (const [i, item] of node.entries()) findExternalRefs(source, item, `${at}/${i}`);
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  for (const [key, value] of Object.entries(node)) {
    const here = `${at}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    if (key === '$ref' && typeof value === 'string' && !value.startsWith('#')) {
      throw cliErrors.create('api:import:ref-external', { source, ref: value, pointer: here });
    }
    if (key === 'example' || key === 'examples') continue;
    findExternalRefs(source, value, here);
  }
}
