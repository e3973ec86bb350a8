import { describe, expect, it } from 'vitest';
import { buildPathAndQuery, compileUrlTemplate, finalUrl, pathValueProblem } from './build-url.js';

describe('compileUrlTemplate', () => {
  it('splits the path around placeholders and keeps the configured query', () => {
    const t = compileUrlTemplate('https://orders.example.com/v1/orders/{orderId}/lines/{lineId}?api=2');
    expect(t.origin).toBe('https://orders.example.com');
    expect(t.pieces).toEqual(['/v1/orders/', 'orderId', '/lines/', 'lineId', '']);
    expect(t.search).toBe('api=2');
  });

  it('refuses a placeholder outside the path', () => {
    expect(() => compileUrlTemplate('https://{tenant}.example.com/x')).toThrow(/outside its path/);
    expect(() => compileUrlTemplate('https://example.com/x?q={q}')).toThrow(/outside its path/);
  });
});

describe('buildPathAndQuery', () => {
  const t = compileUrlTemplate('https://orders.example.com/orders/{orderId}?fixed=1');

  it('encodes path values and appends query values in the given order after the configured query', () => {
    const out = buildPathAndQuery(t, 'tool', new Map([['orderId', 'a b/c']]), [
      ['z', '1 2'],
      ['a', '&x=y'],
    ]);
    expect(out).toBe('/orders/a%20b%2Fc?fixed=1&z=1%202&a=%26x%3Dy');
    expect(finalUrl(t, out, 'tool').href).toBe(`https://orders.example.com${out}`);
  });

  it('refuses dot segments in any encoding and control characters', () => {
    for (const value of ['.', '..', '%2e', '%2E%2e', '%252E%252E', '.%2e']) {
      expect(pathValueProblem(value), value).toMatch(/relative path segment/);
    }
    expect(pathValueProblem('a%00b')).toMatch(/control/);
    expect(pathValueProblem('a\tb')).toMatch(/control/);
    expect(pathValueProblem('...')).toBeUndefined();
    expect(pathValueProblem('%zz')).toBeUndefined();
    expect(() => buildPathAndQuery(t, 'tool', new Map([['orderId', '..']]), [])).toThrow(/relative path segment/);
  });

  it('keeps a path that starts with // on the configured origin', () => {
    const root = compileUrlTemplate('https://orders.example.com/{id}');
    const out = buildPathAndQuery(root, 'tool', new Map([['id', 'x']]), []);
    expect(finalUrl(root, `/${out}`, 'tool').origin).toBe('https://orders.example.com');
  });
});
