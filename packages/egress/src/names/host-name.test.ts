import { describe, expect, it } from 'vitest';
import { parseAllowList } from '../policy/allow-list.js';
import { blockedNameSuffixes, blockedNames, checkHostName, normalizeHostName } from './host-name.js';

describe('checkHostName', () => {
  it('refuses every listed suffix, alone, as a parent, and with trailing dots', () => {
    for (const suffix of blockedNameSuffixes) {
      for (const name of [suffix, `api.${suffix}`, `a.b.${suffix}.`, `x.${suffix.toUpperCase()}..`]) {
        expect(checkHostName(name), name).toMatchObject({ ok: false });
      }
    }
  });

  it('refuses every listed metadata name, also with a trailing dot', () => {
    for (const name of blockedNames) {
      expect(checkHostName(name), name).toMatchObject({ ok: false });
      expect(checkHostName(`${name}.`), name).toMatchObject({ ok: false });
    }
  });

  it('refuses a name without a dot, an empty label, braces, and a numeric last label', () => {
    expect(checkHostName('orders-api')).toMatchObject({ ok: false, reason: expect.stringContaining('without a dot') });
    expect(checkHostName('a..example.com')).toMatchObject({ ok: false });
    expect(checkHostName('{tenant}.example.com')).toMatchObject({ ok: false });
    expect(checkHostName('127.0.0.1..')).toMatchObject({ ok: false });
    expect(checkHostName('foo.0x7f')).toMatchObject({ ok: false });
    expect(checkHostName('')).toMatchObject({ ok: false });
    expect(checkHostName(`${'a'.repeat(64)}.example.com`)).toMatchObject({ ok: false });
  });

  it('accepts public-looking names whose labels merely contain a blocked word', () => {
    for (const name of [
      'api.open-meteo.com',
      'localhost.example.com',
      'internal.example.com',
      'local.dev',
      'api.example.test',
      'xn--bcher-kva.example',
    ]) {
      expect(checkHostName(name), name).toEqual({ ok: true });
    }
  });

  it('lifts the name rules for an allowed name or suffix, but never the structural ones', () => {
    const allow = parseAllowList('orders.internal,*.corp,localhost');
    expect(checkHostName('orders.internal', allow)).toEqual({ ok: true });
    expect(checkHostName('orders.internal.', allow)).toEqual({ ok: true });
    expect(checkHostName('billing.internal', allow)).toMatchObject({ ok: false });
    expect(checkHostName('hr.corp', allow)).toEqual({ ok: true });
    expect(checkHostName('corp', allow)).toMatchObject({ ok: false });
    expect(checkHostName('localhost', allow)).toEqual({ ok: true });
    expect(checkHostName('api.localhost', allow)).toMatchObject({ ok: false });
    expect(checkHostName('{x}.corp', allow)).toMatchObject({ ok: false });
  });

  it('normalises case and trailing dots', () => {
    expect(normalizeHostName('LocalHost..')).toBe('localhost');
  });
});
