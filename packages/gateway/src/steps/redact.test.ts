import { describe, expect, it } from 'vitest';
import { createRedactor, redactJson } from './redact.js';

describe('createRedactor', () => {
  it('masks the raw, URL-encoded, form-encoded and JSON-escaped forms of a secret', () => {
    const redact = createRedactor(['a b/"c"']);
    expect(redact('raw a b/"c" end')).toBe('raw [secret] end');
    expect(redact(`url ${encodeURIComponent('a b/"c"')}`)).toBe('url [secret]');
    expect(redact('form a+b%2F%22c%22')).toBe('form [secret]');
    expect(redact('lower a%20b%2f%22c%22 and a+b%2f%22c%22')).toBe('lower [secret] and [secret]');
    expect(redact(JSON.stringify({ k: 'a b/"c"' }))).toBe('{"k":"[secret]"}');
    expect(redact('Bearer a b/"c"')).toBe('Bearer [secret]');
  });

  it('changes nothing without secrets, and masks keys and values of JSON', () => {
    const none = createRedactor([]);
    expect(none('anything')).toBe('anything');
    const redact = createRedactor(['s3']);
    expect(redactJson({ s3: ['x s3 y', 1, null] }, redact)).toEqual({ '[secret]': ['x [secret] y', 1, null] });
  });
});
