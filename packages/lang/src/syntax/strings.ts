// Decoding and encoding of double-quoted strings: JSON's escapes, nothing more.

/** A bad escape inside a string: `index` and `length` count from the opening quote. */
export interface EscapeProblem {
  index: number;
  length: number;
  message: string;
}

const SIMPLE: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
const HEX4 = /^[0-9A-Fa-f]{4}$/;

/**
 * Resolves the escapes of a string token's text (quotes included). An invalid escape is reported
 * and kept as written without its backslash, so the rest of the string still means something.
 */
export function decodeString(raw: string, unterminated = false): { value: string; problems: EscapeProblem[] } {
  const end = unterminated ? raw.length : raw.length - 1;
  const body = raw.slice(1, end);
  if (!body.includes('\\')) return { value: body, problems: [] };
  const problems: EscapeProblem[] = [];
  let value = '';
  let i = 0;
  while (i < body.length) {
    const c = body[i];
    if (c !== '\\') {
      value += c;
      i++;
      continue;
    }
    const next = body[i + 1];
    if (next === undefined) {
      // A backslash right before the end of an unterminated string: nothing to escape.
      i++;
      continue;
    }
    const simple = SIMPLE[next];
    if (simple !== undefined) {
      value += simple;
      i += 2;
      continue;
    }
    if (next === 'u') {
      const hex = body.slice(i + 2, i + 6);
      if (HEX4.test(hex)) {
        value += String.fromCharCode(Number.parseInt(hex, 16));
        i += 6;
        continue;
      }
      problems.push({
        index: i + 1,
        length: 2 + Math.min(4, hex.length),
        message: `invalid escape \`\\u${hex}\` in a string: \\u takes exactly four hex digits`,
      });
      value += 'u';
      i += 2;
      continue;
    }
    problems.push({ index: i + 1, length: 2, message: `invalid escape \`\\${next}\` in a string` });
    value += next;
    i += 2;
  }
  return { value, problems };
}

/** Writes `value` as a canonical double-quoted string: JSON escapes, `\uXXXX` only for invisible characters. */
export function encodeString(value: string): string {
  let out = '"';
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    const c = value[i];
    if (c === '"') out += '\\"';
    else if (c === '\\') out += '\\\\';
    else if (c === '\n') out += '\\n';
    else if (c === '\r') out += '\\r';
    else if (c === '\t') out += '\\t';
    else if (c === '\b') out += '\\b';
    else if (c === '\f') out += '\\f';
    else if (code < 0x20 || code === 0x7f || code === 0x2028 || code === 0x2029 || isLoneSurrogate(value, i)) {
      out += `\\u${code.toString(16).padStart(4, '0')}`;
    } else out += c;
  }
  return `${out}"`;
}

function isLoneSurrogate(value: string, i: number): boolean {
  const code = value.charCodeAt(i);
  if (code >= 0xd800 && code <= 0xdbff) {
    const next = value.charCodeAt(i + 1);
    return !(next >= 0xdc00 && next <= 0xdfff);
  }
  if (code >= 0xdc00 && code <= 0xdfff) {
    const prev = value.charCodeAt(i - 1);
    return !(prev >= 0xd800 && prev <= 0xdbff);
  }
  return false;
}
