import { createEgressPolicy } from '@maitento/egress';
import { createGateway, type Gateway } from '@maitento/gateway';
import { type CompiledRepo, compileRepo, type Json } from '@maitento/lang';
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeResolver } from './helpers/resolver.js';
import { startRecordingUpstream, type Upstream } from '@maitento/testkit';
import { json } from './helpers/upstream.js';

// A connector whose body has optional fields at every depth (top level, inside a required object, inside an
// object nested in it, inside array items, a whole optional object), a required field that allows null, an
// optional one that allows null, optional query parameters and a path parameter declared `required = false`.
function connectorText(port: number): string {
  return `method = "POST"
url = "http://shop.example.com:${port}/shops/{shop}/orders"
description = "Places an order"
parameters.path = [ { name = "shop" required = false } ]
parameters.query = [
  { name = "limit" type = "integer" },
  { name = "lang" },
  { name = "dryRun" type = "boolean" required = true }
]
schema.request = {
  type = "object"
  properties = {
    name = { type = "string" }
    quantity = { type = "integer" }
    note = { type = "string" }
    clear = { type = ["string", "null"] }
    memo = { type = ["string", "null"] }
    address = {
      type = "object"
      properties = {
        zip = { type = "string" }
        city = { type = "string" }
        geo = { type = "object" properties = { lat = { type = "number" } lng = { type = "number" } } required = ["lat"] }
      }
      required = ["zip", "geo"]
    }
    items = {
      type = "array"
      items = { type = "object" properties = { sku = { type = "string" } gift = { type = "boolean" } } required = ["sku"] }
    }
    options = { type = "object" properties = { wrap = { type = "boolean" } } }
    tags = { type = "array" items = { type = "string" } }
    kind = { enum = ["a", "b"] }
  }
  required = ["name", "clear", "address", "items"]
  additionalProperties = false
}
`;
}

const toolText = `connector = @ref("place-order")
guidance = "Places an order."
`;

/** Whether `schema` lets `null` through, as the definition spells nullable fields. */
function acceptsNull(schema: { [key: string]: Json }): boolean {
  if (Array.isArray(schema.type) && schema.type.includes('null')) return true;
  if (schema.type === 'null') return true;
  return (
    Array.isArray(schema.anyOf) &&
    schema.anyOf.some((s) => typeof s === 'object' && s !== null && 'type' in s && s.type === 'null')
  );
}

/** The arguments of a model that follows the definition and sends `null` wherever the definition allows it. */
function fillLikeAModel(schema: Json): Json {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return 'x';
  if (acceptsNull(schema)) return null;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if (typeof schema.properties === 'object' && schema.properties !== null && !Array.isArray(schema.properties)) {
    const out: { [key: string]: Json } = {};
    for (const [name, child] of Object.entries(schema.properties)) out[name] = fillLikeAModel(child);
    return out;
  }
  switch (schema.type) {
    case 'array':
      return [fillLikeAModel(schema.items ?? {})];
    case 'integer':
      return 2;
    case 'number':
      return 1.5;
    case 'boolean':
      return true;
    default:
      return 'x';
  }
}

let upstream: Upstream;
let repo: CompiledRepo;
let gateway: Gateway;

beforeAll(async () => {
  upstream = await startRecordingUpstream((_req, res) => json(res, 200, { ok: true }));
  const policy = createEgressPolicy({ allow: '127.0.0.1/32' });
  repo = compileRepo(
    [
      { path: 'connectors/open-api/place-order.mtr', content: connectorText(upstream.port) },
      { path: 'external-operations/open-api/place-order.mtr', content: toolText },
    ],
    { egress: policy },
  );
  gateway = createGateway({ policy, resolver: fakeResolver({ 'shop.example.com': '127.0.0.1' }) });
});

afterAll(async () => {
  await gateway.close();
  await upstream.close();
});

function resources() {
  expect(repo.diagnostics).toEqual([]);
  return { tool: repo.tools[0], connector: repo.connectors[0] };
}

describe('null arguments of optional fields, with the definition the compiler produces', () => {
  it('a model that sends null for every optional field gets its call sent, without those fields', async () => {
    const definition = repo.definitions.get('place-order')!;
    const args = fillLikeAModel(definition.parameters as Json);
    // The arguments follow the model-facing definition: that is what a model in strict mode sends.
    const validate = new Ajv({ strict: false }).compile(definition.parameters as object);
    expect(validate(args), JSON.stringify(validate.errors)).toBe(true);
    expect(args).toMatchObject({ request: { quantity: null, address: { city: null, geo: { lng: null } } } });

    const result = await gateway.call({ ...resources(), arguments: args });
    expect(result.ok, JSON.stringify(result)).toBe(true);
    const received = upstream.requests.at(-1)!;
    // Optional fields that were null are not sent at any depth; the required field that allows null keeps it.
    expect(JSON.parse(received.body)).toEqual({
      name: 'x',
      clear: null,
      address: { zip: 'x', geo: { lat: 1.5 } },
      items: [{ sku: 'x' }],
    });
    expect(received.url).toBe('/shops/x/orders?dryRun=true');
  });

  it('shows a path parameter as required even when it is declared required = false', () => {
    const definition = repo.definitions.get('place-order')!;
    const inputs = (definition.parameters.properties as { [key: string]: { [key: string]: Json } }).additionalInputs;
    expect((inputs.properties as { [key: string]: Json })['path.shop']).toEqual({ type: 'string' });
  });

  it('keeps null for a required field and refuses it when its schema does not allow null', async () => {
    const result = await gateway.call({
      ...resources(),
      arguments: {
        request: { name: null, clear: null, address: { zip: 'z', geo: { lat: 1 } }, items: [], quantity: null },
        additionalInputs: { 'path.shop': 's', 'query.dryRun': false },
      },
    });
    expect(result).toMatchObject({ ok: false, code: 'api:gateway:request-invalid' });
    expect(result.ok === false && result.error).toContain('request.name must be string');
    expect(result.ok === false && result.error).not.toContain('quantity');
  });

  it('refuses null for a required query parameter and a path parameter', async () => {
    const result = await gateway.call({
      ...resources(),
      arguments: {
        request: { name: 'n', clear: null, address: { zip: 'z', geo: { lat: 1 } }, items: [] },
        additionalInputs: { 'path.shop': null, 'query.dryRun': null },
      },
    });
    expect(result).toMatchObject({ ok: false, code: 'api:gateway:request-invalid' });
    expect(result.ok === false && result.error).toMatch(/path\.shop is required.*query\.dryRun is required/);
  });
});

// A body written as `mt import openapi` writes a schema used twice: `$defs` and `$ref`s into them. A tool fixes a field
// inside one of them, so the definition inlines that object; the other stays a reference.
describe('null arguments of optional fields inside local $refs', () => {
  const refConnector = (port: number) => `method = "POST"
url = "http://shop.example.com:${port}/ship"
description = "Ships"
schema.request = {
  "$defs" = {
    Address = { type = "object" properties = { city = { type = "string" } zip = { type = "string" } } required = ["city"] }
  }
  type = "object"
  properties = { to = { "$ref" = "#/$defs/Address" } from = { "$ref" = "#/$defs/Address" } }
  required = ["to", "from"]
  additionalProperties = false
}
`;

  it('a model that sends null for the optional fields the definition shows gets its call sent without them', async () => {
    const policy = createEgressPolicy({ allow: '127.0.0.1/32' });
    const shipping = compileRepo(
      [
        { path: 'connectors/open-api/ship.mtr', content: refConnector(upstream.port) },
        {
          path: 'external-operations/open-api/ship.mtr',
          content: 'connector = @ref("ship")\nguidance = "Ships."\nbindings.request:to/city = "Paris"\n',
        },
      ],
      { egress: policy },
    );
    expect(shipping.diagnostics).toEqual([]);
    const definition = shipping.definitions.get('ship')!;
    const request = (definition.parameters.properties as { [key: string]: { [key: string]: Json } }).request;
    // `to` is inlined without its bound city, its zip optional (nullable); `from` stays the reference.
    expect(request.properties).toEqual({
      to: {
        type: 'object',
        properties: { zip: { type: ['string', 'null'] } },
        required: ['zip'],
        additionalProperties: false,
      },
      from: { $ref: '#/$defs/Address' },
    });
    const result = await gateway.call({
      tool: shipping.tools[0],
      connector: shipping.connectors[0],
      arguments: { request: { to: { zip: null }, from: { city: 'Lyon', zip: null } } },
    });
    expect(result.ok, JSON.stringify(result)).toBe(true);
    // The nulls of optional fields are left out inside the reference too; the bound city is filled in.
    expect(JSON.parse(upstream.requests.at(-1)!.body)).toEqual({ to: { city: 'Paris' }, from: { city: 'Lyon' } });
  });
});
