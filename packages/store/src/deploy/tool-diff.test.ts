import type { Json, ToolDefinition } from '@maitento/lang';
import { describe, expect, it } from 'vitest';
import { diffToolDefinitions } from './tool-diff.js';

function def(request: Record<string, Json>, extra: Record<string, Json> = {}, description = 'd'): ToolDefinition {
  return {
    name: 't',
    description,
    parameters: {
      type: 'object',
      properties: {
        request: { type: 'object', properties: request, required: Object.keys(request) },
        additionalInputs: { type: 'object', properties: extra },
      },
    },
  };
}

describe('diffToolDefinitions', () => {
  it('reports a removal and an addition of the same type as a rename, which is breaking', () => {
    const summary = diffToolDefinitions(def({ amount: { type: 'number' } }), def({ total: { type: 'number' } }));
    expect(summary).toEqual({
      changed: ['parameter renamed: request.amount → request.total'],
      breaking: ['parameter renamed: request.amount → request.total'],
    });
  });

  it('names nested body fields and additional inputs by their paths', () => {
    const before = def({ address: { type: 'object', properties: { city: { type: 'string' } } } }, {});
    const after = def(
      { address: { type: 'object', properties: { city: { type: 'string' }, zip: { type: 'integer' } } } },
      { 'query.limit': { type: ['integer', 'null'] } },
    );
    expect(diffToolDefinitions(before, after)).toEqual({
      changed: ['parameter added: request.address.zip', 'parameter added: query.limit'],
      breaking: ['parameter added: request.address.zip'],
    });
  });

  it('treats widening as safe and narrowing (nullable to required, enum shrunk) as breaking', () => {
    const before = def({
      a: { type: 'integer' },
      b: { type: ['string', 'null'] },
      c: { type: 'string', enum: ['x', 'y'] },
    });
    const after = def({ a: { type: 'number' }, b: { type: 'string' }, c: { type: 'string', enum: ['x'] } });
    const summary = diffToolDefinitions(before, after);
    expect(summary.changed).toEqual([
      'parameter type widened: request.a',
      'parameter type narrowed: request.b',
      'parameter type narrowed: request.c',
    ]);
    expect(summary.breaking).toEqual(['parameter type narrowed: request.b', 'parameter type narrowed: request.c']);
  });

  it('reports changed guidance as not breaking and identical definitions as no change', () => {
    expect(diffToolDefinitions(def({}, {}, 'old'), def({}, {}, 'new'))).toEqual({
      changed: ['guidance changed'],
      breaking: [],
    });
    expect(diffToolDefinitions(def({ a: { type: 'string' } }), def({ a: { type: 'string' } }))).toEqual({
      changed: [],
      breaking: [],
    });
  });
});
