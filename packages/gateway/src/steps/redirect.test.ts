import { describe, expect, it } from 'vitest';
import { compileUrlTemplate } from './build-url.js';
import { credentialAllowed, nextHop } from './redirect.js';

const here = new URL('https://api.example.com/a/b');

describe('nextHop', () => {
  it('turns 303, and 301/302 after a POST, into a GET without body', () => {
    expect(nextHop(303, '/c', here, 'PUT', '{}')).toMatchObject({ method: 'GET', body: undefined });
    expect(nextHop(301, '/c', here, 'POST', '{}')).toMatchObject({ method: 'GET', body: undefined });
    expect(nextHop(302, '/c', here, 'POST', '{}')).toMatchObject({ method: 'GET', body: undefined });
  });

  it('keeps method and body on 307 and 308, and on 301/302 of other methods', () => {
    expect(nextHop(307, '/c', here, 'POST', '{}')).toMatchObject({ method: 'POST', body: '{}' });
    expect(nextHop(308, '/c', here, 'PATCH', '{}')).toMatchObject({ method: 'PATCH', body: '{}' });
    expect(nextHop(302, '/c', here, 'DELETE', undefined)).toMatchObject({ method: 'DELETE' });
  });

  it('resolves relative locations and refuses non-http schemes', () => {
    expect(nextHop(302, 'c?d=1#frag', here, 'GET', undefined)?.url.href).toBe('https://api.example.com/a/c?d=1');
    expect(nextHop(302, 'javascript:alert(1)', here, 'GET', undefined)).toBeUndefined();
    expect(nextHop(302, 'http://[bad', here, 'GET', undefined)).toBeUndefined();
  });
});

describe('credentialAllowed', () => {
  const configured = compileUrlTemplate('https://api.example.com/orders/{id}');
  it('allows only the configured scheme, host and port, and never after a downgrade', () => {
    expect(credentialAllowed(new URL('https://api.example.com:443/x'), configured, false)).toBe(true);
    expect(credentialAllowed(new URL('https://API.example.com/x'), configured, false)).toBe(true);
    expect(credentialAllowed(new URL('https://api.example.com/x'), configured, true)).toBe(false);
    expect(credentialAllowed(new URL('http://api.example.com/x'), configured, false)).toBe(false);
    expect(credentialAllowed(new URL('https://api.example.com:8443/x'), configured, false)).toBe(false);
    expect(credentialAllowed(new URL('https://evil.example.com/x'), configured, false)).toBe(false);
  });
});
