import { describe, expect, it } from 'vitest';
import { isRetryableStatus, retryDelayMs } from './retry.js';

describe('retryDelayMs', () => {
  const now = Date.parse('2025-01-01T00:00:00Z');

  it('reads retry-after in seconds, retry-after-ms and an HTTP date', () => {
    expect(retryDelayMs(1, new Headers({ 'retry-after': '3' }), now)).toBe(3000);
    expect(retryDelayMs(1, new Headers({ 'retry-after-ms': '250', 'retry-after': '9' }), now)).toBe(250);
    expect(retryDelayMs(1, new Headers({ 'retry-after': 'Wed, 01 Jan 2025 00:00:07 GMT' }), now)).toBe(7000);
    expect(retryDelayMs(1, new Headers({ 'retry-after': 'Tue, 31 Dec 2024 23:59:00 GMT' }), now)).toBe(0);
  });

  it('falls back to bounded exponential backoff when retry-after is absent, unreadable or too long', () => {
    for (const headers of [undefined, new Headers({ 'retry-after': 'soon' }), new Headers({ 'retry-after': '3600' })]) {
      const first = retryDelayMs(1, headers, now);
      expect(first).toBeGreaterThanOrEqual(375);
      expect(first).toBeLessThanOrEqual(500);
    }
    expect(retryDelayMs(3, undefined, now)).toBeGreaterThanOrEqual(1500);
    expect(retryDelayMs(20, undefined, now)).toBeLessThanOrEqual(8000);
  });
});

describe('isRetryableStatus', () => {
  it('retries 408, 429 and 5xx only', () => {
    expect([408, 429, 500, 502, 503, 504].every(isRetryableStatus)).toBe(true);
    expect([400, 401, 403, 404, 409, 422].some(isRetryableStatus)).toBe(false);
  });
});
