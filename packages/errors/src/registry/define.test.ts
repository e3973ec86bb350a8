import { describe, expect, it } from 'vitest';
import { defineErrors, isMtError, MtError } from '../index.js';

describe('error registry', () => {
  const errors = defineErrors({
    'api:things:not-found': { status: 404, message: 'No thing named {name}', hint: 'Try {other}' },
  });

  it('renders the message and hint from the template and keeps code and status', () => {
    const err = errors.create('api:things:not-found', { name: 'mug', other: 'cup' });
    expect(err).toBeInstanceOf(MtError);
    expect(err.message).toBe('No thing named mug');
    expect(err.hint).toBe('Try cup');
    expect(err.status).toBe(404);
    expect(err.toJSON()).toEqual({ error: 'No thing named mug', code: 'api:things:not-found' });
    expect(isMtError(err)).toBe(true);
    expect(isMtError(new Error('x'))).toBe(false);
  });

  it('refuses a code that is not shaped api|mtr:<area>:<reason>', () => {
    expect(() => defineErrors({ NotFound: { status: 404, message: 'x' } })).toThrow(/not shaped/);
  });
});

describe('one definition per code', () => {
  it('refuses a code that another registry already defines', () => {
    defineErrors({ 'api:twice:first': { status: 404, message: 'No thing {name}' } });
    expect(() =>
      defineErrors({
        'api:twice:first': { status: 404, message: 'Nothing named {name}' },
        'api:twice:other': { status: 400, message: 'x' },
      }),
    ).toThrow(/api:twice:first is already defined/);
  });

  it('refuses it also when the second definition has the same text, as part of another registry', () => {
    defineErrors({ 'api:twice:same': { status: 409, message: 'same' } });
    expect(() =>
      defineErrors({
        'api:twice:same': { status: 409, message: 'same' },
        'api:twice:more': { status: 400, message: 'y' },
      }),
    ).toThrow(/already defined/);
  });

  it('accepts the very same registry defined again (its module evaluated a second time)', () => {
    const specs = () => ({ 'api:reloaded:thing': { status: 500, message: 'boom {x}' } }) as const;
    defineErrors(specs());
    expect(() => defineErrors(specs())).not.toThrow();
  });
});
