import { createEgressPolicy, type Resolver } from '@maitento/egress';
import { createGateway, type Gateway } from '@maitento/gateway';
import type { Connector, Tool } from '@maitento/lang';
import { startRecordingUpstream, type Upstream } from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// A schema's `pattern` is run over text nobody here controls: the model's arguments and the upstream's answers. With
// JavaScript's backtracking engine `^(a+)+$` takes exponential time over a run of `a`s ended by `!` (some seconds at
// 30 letters, longer than the universe at 100), and the whole process, every run on it, would wait. Every pattern
// runs on the linear-time engine (decision 0405): the call is refused at once, nothing is sent.

const EVIL = '^(a+)+$';
const hostile = `${'a'.repeat(50_000)}!`;
const resolver: Resolver = async () => [{ address: '127.0.0.1', family: 4 }];

let upstream: Upstream;
let gateway: Gateway;

beforeAll(async () => {
  upstream = await startRecordingUpstream((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ code: url.pathname === '/hostile-answer' ? hostile : 'aaaa' }));
  });
  gateway = createGateway({ policy: createEgressPolicy({ allow: '127.0.0.1/32' }), resolver });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

const tool: Tool = {
  kind: 'tool',
  name: 'check-code',
  connector: 'check-code-endpoint',
  guidance: 'test',
  bindings: { request: {}, query: {}, path: {} },
  requiresApproval: false,
};

function endpoint(path: string): Connector {
  const codeSchema = { type: 'object', properties: { code: { type: 'string', pattern: EVIL } }, required: ['code'] };
  return {
    kind: 'connector',
    name: 'check-code-endpoint',
    method: 'POST',
    url: `http://api.example.com:${upstream.port}${path}`,
    description: 'test',
    parameters: { path: [], query: [] },
    schema: { request: codeSchema, response: codeSchema },
    auth: 'None',
  };
}

describe('a pathological pattern over hostile text', () => {
  it("refuses the model's argument at once, nothing sent", async () => {
    const before = upstream.requests.length;
    const started = performance.now();
    const result = await gateway.call({
      tool,
      connector: endpoint('/check'),
      arguments: { request: { code: hostile } },
    });
    // Linear time: well under a second for 50,000 letters (the bound is generous for a loaded machine; backtracking
    // would not end).
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(result).toMatchObject({ ok: false, code: 'api:gateway:request-invalid' });
    expect(result.error).toContain('must match pattern');
    expect(upstream.requests.length).toBe(before);
  });

  it('still checks the pattern: a matching argument is sent', async () => {
    const before = upstream.requests.length;
    const result = await gateway.call({
      tool,
      connector: endpoint('/check'),
      arguments: { request: { code: 'aaaa' } },
    });
    expect(result).toMatchObject({ ok: true, status: 200 });
    expect(upstream.requests.length).toBe(before + 1);
  });

  it("refuses the upstream's hostile answer at once", async () => {
    const started = performance.now();
    const result = await gateway.call({
      tool,
      connector: endpoint('/hostile-answer'),
      arguments: { request: { code: 'aa' } },
    });
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(result).toMatchObject({ ok: false, code: 'api:gateway:response-invalid' });
  });

  it('a lookahead, which the engine does not run, is refused as an invalid schema naming why', async () => {
    const connector = endpoint('/check');
    connector.schema = {
      request: { type: 'object', properties: { code: { type: 'string', pattern: '^(?=.*[0-9])[a-z0-9]+$' } } },
    };
    const result = await gateway.call({ tool, connector, arguments: { request: { code: 'a1' } } });
    expect(result).toMatchObject({ ok: false, code: 'api:gateway:schema-invalid' });
    expect(result.error).toContain('lookahead or lookbehind');
  });
});
