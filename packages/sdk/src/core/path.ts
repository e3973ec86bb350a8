import { sdkErrors } from '../errors.js';

/**
 * Builds a URL path from a template, `encodeURIComponent`-ing every interpolated value, so a name
 * such as `a/b` or `x?y` stays one path segment: ``path`/v1/connectors/${name}/versions` ``. An empty, `.` or
 * `..` value is refused with `api:sdk:invalid-argument` (the resource methods are async, so it rejects).
 */
export function path(strings: TemplateStringsArray, ...values: (string | number)[]): string {
  let out = strings[0];
  values.forEach((value, index) => {
    const text = String(value);
    // `.` and `..` would be normalised away by URL parsing and change which route is called.
    if (text === '' || text === '.' || text === '..') {
      throw sdkErrors.create('api:sdk:invalid-argument', { value: JSON.stringify(text) });
    }
    out += encodeURIComponent(text) + strings[index + 1];
  });
  return out;
}
