import { describe, expect, it } from 'vitest';
import { fieldKind, fieldName, readSchemaForm, SchemaFields } from './schema-form.js';
import { fragment } from './views.js';

// The shape of a model-facing tool definition's parameters: every field required, optional ones nullable.
const PARAMETERS = {
  type: 'object',
  properties: {
    request: {
      type: 'object',
      properties: {
        amount: { type: 'number', description: 'In euros' },
        count: { type: ['integer', 'null'] },
        reason: { type: ['string', 'null'] },
        express: { type: ['boolean', 'null'] },
        currency: { type: 'string', enum: ['EUR', 'USD'] },
        tags: { type: ['array', 'null'], items: { type: 'string' } },
        address: {
          type: ['object', 'null'],
          properties: { city: { type: 'string' } },
          required: ['city'],
        },
      },
      required: ['amount', 'count', 'reason', 'express', 'currency', 'tags', 'address'],
    },
    additionalInputs: {
      type: 'object',
      properties: { 'path.orderId': { type: 'string' } },
      required: ['path.orderId'],
    },
  },
  required: ['request', 'additionalInputs'],
};

describe('forms generated from a JSON Schema', () => {
  it('shows each type as its field, marks the required ones, and names fields by JSON pointer', () => {
    expect(fieldKind({ type: 'string' })).toBe('string');
    expect(fieldKind({ type: ['integer', 'null'] })).toBe('integer');
    expect(fieldKind({ type: 'string', enum: ['a'] })).toBe('enum');
    expect(fieldKind({ type: 'array' })).toBe('json');
    expect(fieldKind({ type: 'object' })).toBe('json');
    expect(fieldKind({ anyOf: [{ type: 'string' }] })).toBe('json');
    expect(fieldName('arg', ['additionalInputs', 'a/b~c'])).toBe('arg/additionalInputs/a~1b~0c');
    const html = fragment(SchemaFields({ schema: PARAMETERS, prefix: 'arg' }));
    expect(html).toContain('<input id="f-arg-request-amount" name="arg/request/amount"');
    expect(html).toMatch(/name="arg\/request\/amount"[^>]*required/);
    expect(html).not.toMatch(/name="arg\/request\/reason"[^>]*required/);
    expect(html).toContain('<select id="f-arg-request-currency"');
    expect(html).toContain('<option value="&quot;USD&quot;">USD</option>');
    expect(html).toContain('<option value>(not given)</option>');
    expect(html).toContain('<textarea id="f-arg-request-tags"');
    expect(html).toContain('<legend>address');
    expect(html).toContain('name="arg/additionalInputs/path.orderId"');
    // A required field inside an optional object is marked, but the browser is not told to insist on it.
    expect(html).not.toMatch(/name="arg\/request\/address\/city"[^>]*required/);
    expect(html).toContain('aria-describedby="f-arg-request-amount-hint"');
  });

  it('reads the value back: types converted, empty optional fields left out, refusals by field', () => {
    const read = readSchemaForm(
      PARAMETERS,
      {
        'arg/request/amount': '12.5',
        'arg/request/count': '',
        'arg/request/reason': 'broken',
        'arg/request/express': 'true',
        'arg/request/currency': '"USD"',
        'arg/request/tags': '["a","b"]',
        'arg/request/address/city': '',
        'arg/additionalInputs/path.orderId': 'A-1',
      },
      'arg',
    );
    expect(read.errors).toEqual({});
    expect(read.value).toEqual({
      request: { amount: 12.5, reason: 'broken', express: true, currency: 'USD', tags: ['a', 'b'] },
      additionalInputs: { 'path.orderId': 'A-1' },
    });
    const refused = readSchemaForm(
      PARAMETERS,
      {
        'arg/request/amount': 'x',
        'arg/request/count': '1.5',
        'arg/request/tags': '[',
        'arg/request/address/city': '',
      },
      'arg',
    );
    expect(Object.keys(refused.errors).sort()).toEqual([
      'arg/additionalInputs/path.orderId',
      'arg/request/amount',
      'arg/request/count',
      'arg/request/currency',
      'arg/request/tags',
    ]);
    expect(refused.errors['arg/request/count']).toContain('a whole number');
    expect(refused.values['arg/request/amount']).toBe('x');
  });
});
