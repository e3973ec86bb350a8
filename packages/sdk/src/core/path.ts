/**
 * Builds a URL path from a template, `encodeURIComponent`-ing every interpolated value, so a name
 * such as `a/b` or `x?y` stays one path segment: ``path`/v1/connectors/${name}/versions` ``.
 */
export function path(strings: TemplateStringsArray, ...values: (string | number)[]): string {
  let out = strings[0];
  values.forEach((value, index) => {
    const text = String(value);
    // `.` and `..` would be normalised away by URL parsing and change which route is called.
    if (text === '' || text === '.' || text === '..') {
      throw new TypeError(`path parameter ${JSON.stringify(text)} is not a valid path segment`);
    }
    out += encodeURIComponent(text) + strings[index + 1];
  });
  return out;
}
