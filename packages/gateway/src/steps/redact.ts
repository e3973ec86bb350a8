import type { Json } from '@maitento/lang';

/** Replaces every form of the secrets in a text with `[secret]`. */
export type Redactor = (text: string) => string;

/** The mask a secret's value is replaced with. */
export const SECRET_MASK = '[secret]';

const identity: Redactor = (text) => text;

// The same secret is used call after call: its redactor is built once.
const cache = new Map<string, Redactor>();

/** A redactor for `secrets`: their raw, URL-encoded (both styles) and JSON-escaped forms. */
export function createRedactor(secrets: readonly string[]): Redactor {
  if (secrets.length === 0) return identity;
  const key = secrets.length === 1 ? secrets[0] : JSON.stringify(secrets);
  let redactor = cache.get(key);
  if (redactor === undefined) {
    redactor = buildRedactor(secrets);
    if (cache.size >= 1_000) cache.delete(cache.keys().next().value as string);
    cache.set(key, redactor);
  }
  return redactor;
}

function buildRedactor(secrets: readonly string[]): Redactor {
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (secret === '') continue;
    forms.add(secret);
    forms.add(encodeURIComponent(secret));
    forms.add(encodeURIComponent(secret).replaceAll('%20', '+'));
    forms.add(JSON.stringify(secret).slice(1, -1));
  }
  if (forms.size === 0) return identity;
  // Longest first, so a form that contains another is replaced whole.
  const ordered = [...forms].sort((a, b) => b.length - a.length);
  return (text) => {
    let out = text;
    for (const form of ordered) if (out.includes(form)) out = out.replaceAll(form, SECRET_MASK);
    return out;
  };
}

/** True when the redactor changes nothing (no secrets). */
export function redactsNothing(redact: Redactor): boolean {
  return redact === identity;
}

/** Applies `redact` to every string (and key) inside a JSON value. */
export function redactJson(value: Json, redact: Redactor): Json {
  if (redactsNothing(redact)) return value;
  if (typeof value === 'string') return redact(value);
  if (Array.isArray(value)) return value.map((v) => redactJson(v, redact));
  if (typeof value === 'object' && value !== null) {
    const out: { [key: string]: Json } = {};
    for (const [k, v] of Object.entries(value)) out[redact(k)] = redactJson(v, redact);
    return out;
  }
  return value;
}
