import { formatMtr } from '@maitento/lang/format';

/** A value written into a generated `.mtr` file: JSON, or a directive such as `@ref("x")`. */
export type MtrValue = null | boolean | number | string | MtrValue[] | { [key: string]: MtrValue } | Directive;

/** `@name("arg")` in a generated file. */
export class Directive {
  constructor(
    readonly name: string,
    readonly arg: string,
  ) {}
}

export const ref = (name: string) => new Directive('ref', name);

const NAME = /^[A-Za-z_][A-Za-z0-9_-]*$/;

function keyText(key: string): string {
  return NAME.test(key) ? key : JSON.stringify(key);
}

function valueText(value: MtrValue): string {
  if (value instanceof Directive) return `@${value.name}(${JSON.stringify(value.arg)})`;
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[\n${value.map(valueText).join(',\n')}\n]`;
  const entries = Object.entries(value);
  if (entries.length === 0) return '{}';
  return `{\n${entries.map(([k, v]) => `${keyText(k)} = ${valueText(v)}`).join('\n')}\n}`;
}

/**
 * The text of a `.mtr` file holding `assignments` in order (top-level keys may be dotted paths, written as
 * they are), after `comments` (one `//` line each), in the formatter's canonical layout. Throws when the text
 * does not parse, such as a schema nested deeper than the language allows.
 */
export function mtrFile(comments: string[], assignments: [string, MtrValue][]): string {
  const lines = comments.map((c) => `// ${c}`.trimEnd());
  for (const [key, value] of assignments) lines.push(`${key} = ${valueText(value)}`);
  const formatted = formatMtr(`${lines.join('\n')}\n`, 'generated.mtr');
  const errors = formatted.diagnostics.filter((d) => d.severity === 'error');
  if (errors.length > 0) throw new Error(errors.map((d) => d.message).join('; '));
  return formatted.text;
}
