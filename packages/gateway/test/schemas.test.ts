import { createEgressPolicy } from '@maitento/egress';
import { createGateway, type Gateway } from '@maitento/gateway';
import type { Connector, JsonSchema, Tool } from '@maitento/lang';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRecordingUpstream, type Upstream } from '@maitento/testkit';
import { json } from './helpers/upstream.js';

let upstream: Upstream;
let gateway: Gateway;

beforeAll(async () => {
  upstream = await startRecordingUpstream(({ body }, res) => json(res, 200, { got: JSON.parse(body || 'null') }));
  gateway = createGateway({ policy: createEgressPolicy({ allow: '127.0.0.1/32' }) });
});
afterAll(async () => {
  await gateway.close();
  await upstream.close();
});

// Fresh objects each time, as two namespaces (or two deploys of one) hand the gateway.
function connectorWith(request: JsonSchema, name = 'create-item'): Connector {
  return {
    kind: 'connector',
    name,
    method: 'POST',
    url: `${upstream.origin}/items`,
    description: 'test',
    parameters: { path: [], query: [] },
    schema: { request },
    auth: 'None',
  };
}

function toolOn(connector: Connector): Tool {
  return {
    kind: 'tool',
    name: 'create-item',
    connector: connector.name,
    guidance: 'test',
    bindings: { request: {}, query: {}, path: {} },
    requiresApproval: false,
  };
}

const countSchema = (type: string): JsonSchema => ({
  $id: 'https://schemas.example.com/item.json',
  type: 'object',
  properties: { count: { type } },
  required: ['count'],
  additionalProperties: false,
});

describe('request schemas', () => {
  it('validates two different schemas that share a $id, each by its own rules', async () => {
    const numbers = connectorWith(countSchema('integer'));
    const words = connectorWith(countSchema('string'));
    const first = await gateway.call({
      tool: toolOn(numbers),
      connector: numbers,
      arguments: { request: { count: 3 } },
    });
    expect(first).toMatchObject({ ok: true, body: { got: { count: 3 } } });
    const second = await gateway.call({
      tool: toolOn(words),
      connector: words,
      arguments: { request: { count: 'three' } },
    });
    expect(second).toMatchObject({ ok: true, body: { got: { count: 'three' } } });
    const wrong = await gateway.call({ tool: toolOn(words), connector: words, arguments: { request: { count: 3 } } });
    expect(wrong).toMatchObject({ ok: false, code: 'api:gateway:request-invalid' });
    expect(wrong.error).toContain('request.count must be string');
  });

  it('compiles a schema again when the same content comes in a new object (a redeploy), sharing nothing stale', async () => {
    for (const type of ['integer', 'string', 'integer']) {
      const connector = connectorWith(countSchema(type));
      const value = type === 'integer' ? 1 : 'one';
      const result = await gateway.call({
        tool: toolOn(connector),
        connector,
        arguments: { request: { count: value } },
      });
      expect(result, type).toMatchObject({ ok: true });
    }
  });

  it('reports a schema that cannot be compiled as a schema error, never as an address refusal naming the URL', async () => {
    const broken = connectorWith({ type: 'object', properties: { count: { $ref: '#/definitions/missing' } } });
    const result = await gateway.call({
      tool: toolOn(broken),
      connector: broken,
      arguments: { request: { count: 1 } },
    });
    expect(result).toMatchObject({ ok: false, code: 'api:gateway:schema-invalid' });
    expect(result.error).not.toContain(upstream.origin);
    expect(result.error).toContain('create-item');
  });
});
