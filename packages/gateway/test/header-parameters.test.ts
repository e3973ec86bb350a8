import { createEgressPolicy } from '@maitento/egress';
import { createGateway, type Gateway } from '@maitento/gateway';
import { type CompiledRepo, compileRepo, type Json } from '@maitento/lang';
import { startRecordingUpstream, type Upstream } from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeResolver } from './helpers/resolver.js';
import { json } from './helpers/upstream.js';

// A connector's header parameters (`parameters.header`, what `mt import openapi` makes of an OpenAPI header
// parameter): tool inputs the model fills, sent as headers to a real upstream; credentials and the gateway's own
// headers cannot be one.
function connectorText(port: number, extra = ''): string {
  return `method = "GET"
url = "http://api.example.com:${port}/things"
description = "Lists things"
parameters.header = [
  { name = "X-Request-Id" description = "Correlates the call" required = true },
  { name = "X-Page" type = "integer" }${extra}
]
`;
}

const toolText = `connector = @ref("list-things")
guidance = "Lists things."
`;

let upstream: Upstream;
let repo: CompiledRepo;
let gateway: Gateway;
const policy = createEgressPolicy({ allow: '127.0.0.1/32' });

function compile(connector: string, tool = toolText) {
  return compileRepo(
    [
      { path: 'connectors/open-api/list-things.mtr', content: connector },
      { path: 'external-operations/open-api/list-things.mtr', content: tool },
    ],
    { egress: policy },
  );
}

beforeAll(async () => {
  upstream = await startRecordingUpstream((_req, res) => json(res, 200, { ok: true }));
  repo = compile(connectorText(upstream.port));
  gateway = createGateway({ policy, resolver: fakeResolver({ 'api.example.com': '127.0.0.1' }) });
});

afterAll(async () => {
  await gateway.close();
  await upstream.close();
});

function resources() {
  expect(repo.diagnostics).toEqual([]);
  return { tool: repo.tools[0], connector: repo.connectors[0] };
}

describe('header parameters', () => {
  it('are inputs of the tool definition: a required one as it is, an optional one nullable', () => {
    const definition = repo.definitions.get('list-things')!;
    const inputs = (definition.parameters.properties as { [key: string]: { [key: string]: Json } }).additionalInputs;
    expect(inputs.properties).toEqual({
      'header.X-Request-Id': { type: 'string', description: 'Correlates the call' },
      'header.X-Page': { type: ['integer', 'null'] },
    });
    expect(inputs.required).toEqual(['header.X-Request-Id', 'header.X-Page']);
  });

  it('are sent as headers; an optional one left null is not sent', async () => {
    const result = await gateway.call({
      ...resources(),
      arguments: { additionalInputs: { 'header.X-Request-Id': 'req-1', 'header.X-Page': 3 } },
    });
    expect(result.ok, JSON.stringify(result)).toBe(true);
    const received = upstream.requests.at(-1)!;
    expect(received.headers['x-request-id']).toBe('req-1');
    expect(received.headers['x-page']).toBe('3');
    expect(received.headers['user-agent']).toBe('Maitento/0.1');
    const second = await gateway.call({
      ...resources(),
      arguments: { additionalInputs: { 'header.X-Request-Id': 'req-2', 'header.X-Page': null } },
    });
    expect(second.ok, JSON.stringify(second)).toBe(true);
    expect(upstream.requests.at(-1)!.headers['x-request-id']).toBe('req-2');
    expect(upstream.requests.at(-1)!.headers).not.toHaveProperty('x-page');
  });

  it('refuses a missing required one, a wrong type, a line break, and an undeclared header', async () => {
    const before = upstream.requests.length;
    const missing = await gateway.call({ ...resources(), arguments: { additionalInputs: { 'header.X-Page': 'x' } } });
    expect(missing).toMatchObject({ ok: false, code: 'api:gateway:request-invalid' });
    expect(missing.ok === false && missing.error).toContain('header.X-Request-Id is required');
    expect(missing.ok === false && missing.error).toContain('header.X-Page must be an integer');
    const split = await gateway.call({
      ...resources(),
      arguments: { additionalInputs: { 'header.X-Request-Id': 'a\r\nX-Injected: 1' } },
    });
    expect(split).toMatchObject({ ok: false, code: 'api:gateway:request-invalid' });
    expect(split.ok === false && split.error).toContain(
      'header.X-Request-Id must be one line without control characters',
    );
    const unknown = await gateway.call({
      ...resources(),
      arguments: { additionalInputs: { 'header.X-Request-Id': 'r', 'header.Authorization': 'Bearer x' } },
    });
    expect(unknown).toMatchObject({ ok: false, code: 'api:gateway:argument-unknown' });
    expect(upstream.requests.length).toBe(before);
  });

  it('cannot be a credential or a header the gateway sends itself (mtr:header:reserved)', () => {
    const reserved = compile(connectorText(1, ',\n  { name = "authorization" },\n  { name = "Content-Type" }'));
    expect(reserved.diagnostics.map((d) => [d.code, d.message])).toEqual([
      [
        'mtr:header:reserved',
        'the header authorization cannot be a parameter: it carries a credential; give the tool an auth = { header, secret }',
      ],
      [
        'mtr:header:reserved',
        'the header Content-Type cannot be a parameter: the gateway sends the body as application/json',
      ],
    ]);
    const duplicate = compile(connectorText(1, ',\n  { name = "x-request-id" }'));
    expect(duplicate.diagnostics.map((d) => d.code)).toEqual(['mtr:names:duplicate']);
    const credential = compile(
      connectorText(1).replace('description = "Lists things"', 'description = "Lists things"\nauth = "Header"'),
      `${toolText}auth = { header = "x-page" secret = @ref("things-key") }\n`,
    );
    expect(credential.diagnostics.map((d) => [d.code, d.message])).toContainEqual([
      'mtr:header:reserved',
      'the header X-Page cannot be a parameter: the tool list-things sends its credential in it',
    ]);
  });
});
