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
