import { BoundedMap } from '@maitento/egress';
import type { Json } from '@maitento/lang';

/** Replaces every form of the secrets in a text with `[secret]`. */
export type Redactor = (text: string) => string;

/** The mask a secret's value is replaced with. */
export const SECRET_MASK = '[secret]';

const identity: Redactor = (text) => text;

// The forms each redactor masks, so a body cut inside a secret can have the cut-off start masked too.
const formsOf = new WeakMap<Redactor, readonly string[]>();

/** The shortest start of a secret that is masked at the end of a cut text; shorter ones say too little to matter. */
const MIN_CUT_PREFIX = 4;

// The same secret is used call after call: its redactor is built once.
const cache = new BoundedMap<string, Redactor>(1_000);

/** A redactor for `secrets`: their raw, URL-encoded (both styles, either hex case) and JSON-escaped forms. */
export function createRedactor(secrets: readonly string[]): Redactor {
  if (secrets.length === 0) return identity;
  const key = secrets.length === 1 ? secrets[0] : JSON.stringify(secrets);
  let redactor = cache.get(key);
  if (redactor === undefined) {
    redactor = buildRedactor(secrets);
    cache.set(key, redactor);
  }
  return redactor;
}

function buildRedactor(secrets: readonly string[]): Redactor {
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (secret === '') continue;
    forms.add(secret);
    const encoded = encodeURIComponent(secret);
    // Percent-encoding is case-insensitive: an upstream may echo `%2f` where we sent `%2F`.
    const lower = encoded.replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase());
    for (const form of [encoded, lower]) {
      forms.add(form);
      forms.add(form.replaceAll('%20', '+'));
    }
    forms.add(JSON.stringify(secret).slice(1, -1));
  }
  if (forms.size === 0) return identity;
  // Longest first, so a form that contains another is replaced whole.
  const ordered = [...forms].sort((a, b) => b.length - a.length);
  const redactor: Redactor = (text) => {
    let out = text;
    for (const form of ordered) if (out.includes(form)) out = out.replaceAll(form, SECRET_MASK);
    return out;
  };
  formsOf.set(redactor, ordered);
  return redactor;
}

/**
 * Masks the start of a secret left at the end of a text that was cut (a body cut at the size limit inside the
 * secret), which `redact` cannot recognise because the rest of the secret is missing.
 */
export function redactCutEnd(text: string, redact: Redactor): string {
  const forms = formsOf.get(redact);
  if (forms === undefined) return text;
  let longest = 0;
  for (const form of forms) {
    for (let length = Math.min(form.length - 1, text.length); length >= MIN_CUT_PREFIX; length--) {
      if (length > longest && text.endsWith(form.slice(0, length))) {
        longest = length;
        break;
      }
    }
  }
  return longest === 0 ? text : text.slice(0, text.length - longest) + SECRET_MASK;
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
    // Defined, not assigned: a `__proto__` key (JSON.parse makes it an own key) must stay a key, not a prototype.
    for (const [k, v] of Object.entries(value)) {
      Object.defineProperty(out, redact(k), {
        value: redactJson(v, redact),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }
  return value;
}
