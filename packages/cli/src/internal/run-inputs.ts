import { InvalidArgumentError } from 'commander';

function split(value: string): [string, string] {
  const equals = value.indexOf('=');
  if (equals <= 0) throw new InvalidArgumentError('give it as NAME=VALUE');
  return [value.slice(0, equals), value.slice(equals + 1)];
}

/**
 * Collects a repeated `--input NAME=VALUE` (commander's option parser). The value is sent as text: the
 * server converts "42" or "true" for a binding input of that type.
 */
export function collectInput(value: string, previous: Record<string, unknown> = {}): Record<string, unknown> {
  const [name, text] = split(value);
  return { ...previous, [name]: text };
}

/** Collects a repeated `--input-json NAME=JSON`: the value is sent as JSON (objects, arrays, numbers, null). */
export function collectJsonInput(value: string, previous: Record<string, unknown> = {}): Record<string, unknown> {
  const [name, text] = split(value);
  try {
    return { ...previous, [name]: JSON.parse(text) };
  } catch {
    throw new InvalidArgumentError(`${JSON.stringify(text)} is not JSON`);
  }
}
