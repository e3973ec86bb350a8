import { describe, expect, it } from 'vitest';
import { compile, ordersConnector, refundConnector, where } from './helpers.js';

const tool = (body: string) => ({
  'connectors/open-api/orders.mtr': ordersConnector,
  'connectors/open-api/refund.mtr': refundConnector,
  'external-operations/open-api/t.mtr': body,
});

describe('building value trees', () => {
  it('deep-merges dotted keys of one file into one object', () => {
    const repo = compile({
      ...tool('connector = @ref("refund")\nguidance = "g"\n'),
      'agents/a.mtr': 'model = "openai:gpt-4o-mini"\ninstructions = "i"\n',
      'interactions/one-shot/i.mtr': `agent = { name = "A" agent = @ref("a") }
task = "%%q%% %%p%%"
inputs.prompts = [ { name = "q" } ]
functions.openApi = [ { ref = @ref("t") } ]
inputs.functions.binding = [ { function = @ref("t") name = "p" target = "orderId" type = "path" } ]
`,
    });
    expect(repo.diagnostics).toEqual([]);
    const [interaction] = repo.interactions;
    expect(interaction.inputs.prompts.map((p) => p.name)).toEqual(['q']);
    expect(interaction.inputs.functions.binding[0]).toMatchObject({ function: 't', target: 'orderId', type: 'path' });
  });

  it('reads kind:name segments as a qualifier and a name, keeping / in the name', () => {
    const repo = compile(
      tool(`connector = @ref("refund")
guidance = "g"
bindings.request:address/city = "Paris"
bindings.path:orderId = "A-1"
`),
    );
    expect(repo.diagnostics).toEqual([]);
    expect(repo.tools[0].bindings).toEqual({
      request: { 'address/city': 'Paris' },
      query: {},
      path: { orderId: 'A-1' },
    });
  });

  it('reports the same key twice at the second key, naming the first line', () => {
    const repo = compile(tool('connector = @ref("orders")\nguidance = "g"\nguidance = "h"\n'));
    expect(where(repo.diagnostics)).toEqual(['external-operations/open-api/t.mtr:3:1 mtr:keys:duplicate']);
    expect(repo.diagnostics[0].hint).toContain('line 2');
    expect(repo.tools).toEqual([]);
  });

  it('reports a scalar set over an object and an object path through a scalar', () => {
    const repo = compile(
      tool(`connector = @ref("orders")
guidance = "g"
auth.header = "X-Api-Key"
auth = "none"
requiresApproval = true
requiresApproval.x = 1
`),
    );
    expect(where(repo.diagnostics)).toEqual([
      'external-operations/open-api/t.mtr:4:1 mtr:keys:conflict',
      'external-operations/open-api/t.mtr:6:1 mtr:keys:conflict',
    ]);
  });

  it('refuses an unknown directive and a directive with the wrong arguments', () => {
    const repo = compile(tool('connector = @reff("orders")\nguidance = @ref("a", "b")\n'));
    expect(where(repo.diagnostics)).toEqual([
      'external-operations/open-api/t.mtr:1:13 mtr:directive:unknown',
      'external-operations/open-api/t.mtr:2:12 mtr:directive:arguments',
    ]);
    expect(repo.diagnostics[0].hint).toContain('@ref');
  });
});

describe('@json', () => {
  const connector = (path: string) => `method = "POST"
url = "https://api.example.com/things"
description = "d"
schema.request = @json("${path}")
`;

  it('reads a JSON file of the repo by its path from the repo root', () => {
    const repo = compile({
      'connectors/open-api/c.mtr': connector('schemas/thing.json'),
      'schemas/thing.json': '{ "type": "object", "properties": { "name": { "type": "string" } } }',
    });
    expect(repo.diagnostics).toEqual([]);
    expect(repo.connectors[0].schema.request).toEqual({
      type: 'object',
      properties: { name: { type: 'string' } },
    });
  });

  it('reports bad JSON at its line and column in the JSON file', () => {
    const repo = compile({
      'connectors/open-api/c.mtr': connector('schemas/thing.json'),
      'schemas/thing.json': '{\n  "type": "object",\n  "properties": { "name": }\n}\n',
    });
    expect(where(repo.diagnostics)).toEqual(['schemas/thing.json:3:27 mtr:json:invalid']);
  });

  it('refuses a path that leaves the repo, an absolute path, and a file that is not there', () => {
    for (const [path, code] of [
      ['../secrets.json', 'mtr:json:path'],
      ['schemas/../../x.json', 'mtr:json:path'],
      ['/etc/passwd.json', 'mtr:json:path'],
      ['schemas/missing.json', 'mtr:json:not-found'],
    ]) {
      const repo = compile({ 'connectors/open-api/c.mtr': connector(path) });
      expect(where(repo.diagnostics), path).toEqual([`connectors/open-api/c.mtr:4:18 ${code}`]);
    }
  });
});
