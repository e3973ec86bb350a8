import type { Connector, FunctionBinding, Tool } from '@maitento/lang';
import { describe, expect, it } from 'vitest';
import { toolPlan } from '../internal/plan.js';
import { readArguments } from './arguments.js';
import { mergeBindings } from './bindings.js';

const connector: Connector = {
  kind: 'connector',
  name: 'c',
  method: 'POST',
  url: 'https://api.example.com/shops/{shop}/orders',
  description: 'd',
  parameters: {
    path: [{ name: 'shop', type: 'string', required: true }],
    query: [
      { name: 'limit', type: 'integer', required: false },
      { name: 'lang', type: 'string', required: false },
    ],
  },
  schema: {
    request: {
      type: 'object',
      properties: {
        query: { type: 'string' },
        address: { type: 'object', properties: { city: { type: 'string' }, street: { type: 'string' } } },
        partitionId: { type: 'string' },
      },
      additionalProperties: false,
    },
  },
  auth: 'None',
};
const tool: Tool = {
  kind: 'tool',
  name: 't',
  connector: 'c',
  guidance: 'g',
  bindings: { request: { 'address/city': 'Paris' }, query: { lang: 'fr' }, path: {} },
  requiresApproval: false,
};
const plan = toolPlan(tool, connector);
const partition: FunctionBinding = {
  name: 'kb',
  function: 't',
  target: 'partitionId',
  type: 'request',
  required: false,
  default: 'kb-default',
};
const shop: FunctionBinding = { name: 'shop', function: 't', target: 'shop', type: 'path', required: true };

describe('readArguments', () => {
  it('refuses arguments that name a fixed or run-bound field, nested ones included', () => {
    const run = [{ binding: partition, value: 'kb-1' }];
    expect(() => readArguments(plan, { additionalInputs: { 'query.lang': 'en' } }, run)).toThrow(/query.lang/);
    expect(() => readArguments(plan, { request: { partitionId: 'x' } }, run)).toThrow(/request.partitionId/);
    expect(() => readArguments(plan, { request: { address: { city: 'Rome' } } }, run)).toThrow(
      /request.address.city.*fixed/,
    );
    expect(() =>
      readArguments(plan, { additionalInputs: { 'path.shop': 's' } }, [{ binding: shop, value: 's' }]),
    ).toThrow(/path.shop/);
  });

  it('refuses unknown arguments and shapes that are not objects', () => {
    expect(() => readArguments(plan, { other: 1 }, undefined)).toThrow(/has no argument other/);
    expect(() => readArguments(plan, { request: { nope: 1 } }, undefined)).toThrow(/request.nope/);
    expect(() => readArguments(plan, { additionalInputs: { 'query.nope': 1 } }, undefined)).toThrow(/query.nope/);
    expect(() => readArguments(plan, { additionalInputs: { limit: 1 } }, undefined)).toThrow(/has no argument limit/);
    expect(() => readArguments(plan, [1], undefined)).toThrow(/not a JSON object/);
    expect(() => readArguments(plan, { request: 'x' }, undefined)).toThrow(/"request" is not an object/);
  });

  it("leaves out null optional body fields at any depth without changing the caller's object", () => {
    const request = { query: null, address: { street: null } };
    const args = readArguments(plan, { request }, undefined);
    expect(args.request).toEqual({ address: {} });
    expect(request).toEqual({ query: null, address: { street: null } });
  });

  it('drops null optional inputs', () => {
    const args = readArguments(plan, { additionalInputs: { 'query.limit': null, 'path.shop': 's1' } }, undefined);
    expect([...args.query]).toEqual([]);
    expect([...args.path]).toEqual([['shop', 's1']]);
  });
});

describe('mergeBindings', () => {
  it('applies fixed bindings, then run bindings with their default when the input is empty, without changing the arguments', () => {
    const request = { query: 'q', address: { street: 'Main' } };
    const args = readArguments(plan, { request }, [{ binding: partition, value: '' }]);
    const merged = mergeBindings(plan, args, [{ binding: partition, value: '' }]);
    expect(merged.body).toEqual({ query: 'q', address: { street: 'Main', city: 'Paris' }, partitionId: 'kb-default' });
    expect(request).toEqual({ query: 'q', address: { street: 'Main' } });
    expect(merged.query.get('lang')).toBe('fr');
  });
});
