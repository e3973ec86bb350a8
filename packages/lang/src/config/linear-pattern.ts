import { RE2JS } from 're2js';

// A JSON Schema `pattern` is matched against the model's arguments and the upstream's responses, text nobody here
// controls: JavaScript's backtracking engine takes exponential time on some patterns (`^(a+)+$` over 30 letters and a
// `!`), which would block the event loop of every run on the process. Every pattern of a schema therefore runs on
// RE2JS, whose time is linear in the text (decision 0405, docs/security.md).

/**
 * `source` (ECMA-262 syntax, as JSON Schema writes patterns) in RE2's syntax: the escapes `\uXXXX` and `\u{X...}`
 * become `\x{...}`; everything else is the same text.
 */
export function re2Source(source: string): string {
  let out = '';
  for (let i = 0; i < source.length; i++) {
    const c = source[i] as string;
    if (c !== '\\' || i + 1 >= source.length) {
      out += c;
      continue;
    }
    const next = source[i + 1] as string;
    if (next === 'u') {
      const four = /^[0-9A-Fa-f]{4}/.exec(source.slice(i + 2, i + 6));
      if (four !== null) {
        out += `\\x{${four[0]}}`;
        i += 5;
        continue;
      }
      const braced = /^\{([0-9A-Fa-f]{1,6})\}/.exec(source.slice(i + 2, i + 10));
      if (braced !== null) {
        out += `\\x{${braced[1]}}`;
        i += 1 + braced[0].length;
        continue;
      }
    }
    out += c + next;
    i += 1;
  }
  return out;
}

const ENGINE = "Maitento's linear-time pattern engine (RE2)";
const REWRITE = 'rewrite the pattern without it, or leave that check to the upstream';

/**
 * Why `source` cannot run on the linear-time engine every schema pattern runs on (a lookaround, a back-reference,
 * or syntax RE2 does not read), or undefined when it can.
 */
export function linearPatternProblem(source: string): string | undefined {
  try {
    RE2JS.compile(re2Source(source));
    return undefined;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (/\(\?<?[=!]/.test(source)) {
      return `uses a lookahead or lookbehind, which ${ENGINE} does not run: ${REWRITE}`;
    }
    if (/\\([1-9]|k<)/.test(source)) {
      return `uses a back-reference, which ${ENGINE} does not run: ${REWRITE}`;
    }
    return `cannot be read by ${ENGINE}: ${message}`;
  }
}

/** A compiled pattern as ajv uses it. */
interface LinearPattern {
  test(text: string): boolean;
  toString(): string;
}

/**
 * The engine ajv compiles every `pattern` and `patternProperties` key with (its `code.regExp` option): RE2JS, linear
 * in the text. A pattern it cannot run throws, so the schema does not compile (deploy refuses it first).
 */
export const linearRegExp = Object.assign(
  (pattern: string, _unicode: string): LinearPattern => {
    let re: RE2JS;
    try {
      re = RE2JS.compile(re2Source(pattern));
    } catch {
      throw new Error(`pattern ${JSON.stringify(pattern)} ${linearPatternProblem(pattern)}`);
    }
    // ajv keys compiled patterns by their text: two patterns must never print alike.
    const text = `linear:${pattern}`;
    return { test: (input: string) => re.test(input), toString: () => text };
  },
  // Read only for ajv's standalone code, which Maitento does not generate.
  { code: 'linearRegExp' },
);
