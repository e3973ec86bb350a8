import { createEgressPolicy } from '@maitento/egress';
import { describe, expect, it } from 'vitest';
import { type RunBound, runBoundFields, toolDefinition } from '@maitento/lang';
import { compile, ordersConnector, refundConnector, where } from './helpers.js';

const base = {
  'connectors/open-api/orders.mtr': ordersConnector,
  'connectors/open-api/refund.mtr': refundConnector,
  'agents/support.mtr': 'model = "openai:gpt-4o-mini"\ninstructions = "i"\nfunctions = [ { ref = @ref("get") } ]\n',
  'external-operations/open-api/get.mtr': 'connector = @ref("orders")\nguidance = "g"\n',
  'external-operations/open-api/refund.mtr': 'connector = @ref("refund")\nguidance = "g"\n',
};

describe('resource folders and names', () => {
  it('reports a .mtr file outside the resource folders and a name that is not kebab-case', () => {
    const repo = compile({
      ...base,
      'connectors/x.mtr': ordersConnector,
      'agents/Support_Bot.mtr': base['agents/support.mtr'],
    });
    expect(where(repo.diagnostics)).toEqual([
      'agents/Support_Bot.mtr:1:1 mtr:repo:name-style',
      'connectors/x.mtr:1:1 mtr:repo:unknown-folder',
    ]);
    expect(repo.diagnostics[0].severity).toBe('warning');
    expect(repo.diagnostics[1].severity).toBe('error');
  });

  it('reports two resources of one kind whose names differ only in case', () => {
    const repo = compile({ ...base, 'agents/Support.mtr': base['agents/support.mtr'] });
    expect(where(repo.diagnostics)).toContain('agents/support.mtr:1:1 mtr:repo:duplicate-name');
  });
});

describe('properties of each kind', () => {
  it('reports unknown, missing and mistyped properties, bad values and a long description, all in one pass', () => {
    const repo = compile({
      'connectors/open-api/c.mtr': `method = "FETCH"
url = "https://api.example.com/x"
description = "${'x'.repeat(501)}"
parameters.query = [ { name = "q" type = "text" } ]
auht = "Header"
`,
      'external-operations/open-api/t.mtr': 'connector = "c"\nrequiresApproval = "yes"\n',
      'agents/a.mtr': 'model = "gpt-4o"\ninstructions = "i"\n',
    });
    expect(where(repo.diagnostics)).toEqual([
      'agents/a.mtr:1:9 mtr:agent:model-invalid',
      'connectors/open-api/c.mtr:1:10 mtr:property:value',
      'connectors/open-api/c.mtr:3:15 mtr:property:too-long',
      'connectors/open-api/c.mtr:4:42 mtr:property:value',
      'connectors/open-api/c.mtr:5:1 mtr:property:unknown',
      'external-operations/open-api/t.mtr:1:1 mtr:property:required',
      'external-operations/open-api/t.mtr:1:13 mtr:property:type',
      'external-operations/open-api/t.mtr:2:20 mtr:property:type',
    ]);
    const unknown = repo.diagnostics.find((d) => d.code === 'mtr:property:unknown');
    expect(unknown?.hint).toBe('did you mean "auth"?');
    expect(repo.ok).toBe(false);
  });
});

describe('references', () => {
  it('reports a reference to nothing with a suggestion, and one to the wrong kind', () => {
    const repo = compile({
      ...base,
      'external-operations/open-api/get.mtr': 'connector = @ref("order")\nguidance = "g"\n',
      'agents/support.mtr':
        'model = "openai:gpt-4o-mini"\ninstructions = "i"\nfunctions = [ { ref = @ref("orders") } ]\n',
    });
    expect(where(repo.diagnostics)).toEqual([
      'agents/support.mtr:3:23 mtr:ref:wrong-kind',
      'external-operations/open-api/get.mtr:1:13 mtr:ref:unknown',
    ]);
    expect(repo.diagnostics[1].hint).toBe('did you mean "orders"?');
  });

  it('accepts any secret name unless the known secrets are given, then reports an unknown one', () => {
    const files = {
      ...base,
      'connectors/open-api/orders.mtr': `${ordersConnector}auth = "Header"\n`,
      'external-operations/open-api/get.mtr':
        'connector = @ref("orders")\nguidance = "g"\nauth = { header = "X-Api-Key" secret = @ref("orders-key") }\n',
    };
    expect(compile(files).diagnostics).toEqual([]);
    expect(compile(files, { knownSecrets: ['orders-keys'] }).diagnostics).toMatchObject([
      { code: 'api:secrets:not-found', line: 3, column: 40, hint: 'did you mean "orders-keys"?' },
    ]);
    expect(compile(files, { knownSecrets: ['orders-key'] }).diagnostics).toEqual([]);
  });
});

describe('connector checks', () => {
  it('matches url placeholders and declared path parameters both ways', () => {
    const repo = compile({
      'connectors/open-api/c.mtr': `method = "GET"
url = "https://api.example.com/shops/{shopId}/orders/{orderId}"
description = "d"
parameters.path = [ { name = "orderId" }, { name = "lineId" } ]
`,
    });
    expect(where(repo.diagnostics)).toEqual([
      'connectors/open-api/c.mtr:2:38 mtr:path:undeclared',
      'connectors/open-api/c.mtr:4:52 mtr:path:unused',
    ]);
  });

  it('refuses a path parameter in the host, the port or the query, where it could choose the address', () => {
    const repo = compile({
      'connectors/open-api/host.mtr': `method = "GET"
url = "https://{tenant}.example.com/v1/x"
description = "d"
parameters.path = [ { name = "tenant" } ]
`,
      'connectors/open-api/port.mtr': `method = "GET"
url = "https://api.example.com:{port}/v1/x"
description = "d"
parameters.path = [ { name = "port" } ]
`,
      'connectors/open-api/query.mtr': `method = "GET"
url = "https://api.example.com/v1/x?id={id}"
description = "d"
parameters.path = [ { name = "id" } ]
`,
      'connectors/open-api/path.mtr': `method = "GET"
url = "https://api.example.com/v1/{id}?fixed=1"
description = "d"
parameters.path = [ { name = "id" } ]
`,
    });
    expect(where(repo.diagnostics)).toEqual([
      'connectors/open-api/host.mtr:2:16 mtr:url:invalid',
      'connectors/open-api/port.mtr:2:32 mtr:url:invalid',
      'connectors/open-api/query.mtr:2:40 mtr:url:invalid',
    ]);
    expect(repo.diagnostics[0].message).toContain('{tenant} in its host');
    expect(repo.diagnostics[2].message).toContain('{id} in its query');
  });

  it('reports duplicate parameter names and a schema that is not JSON Schema, at the wrong value', () => {
    const repo = compile({
      'connectors/open-api/c.mtr': `method = "POST"
url = "https://api.example.com/x"
description = "d"
parameters.query = [ { name = "q" }, { name = "q" } ]
schema.request = {
  type = "object"
  properties = { amount = { type = "money" } }
}
`,
    });
    expect(where(repo.diagnostics)).toEqual([
      'connectors/open-api/c.mtr:4:47 mtr:names:duplicate',
      'connectors/open-api/c.mtr:7:36 mtr:schema:invalid',
    ]);
  });

  it('reports a $ref that resolves nowhere and a pattern that is no regular expression', () => {
    const connector = (schema: string) =>
      `method = "POST"\nurl = "https://api.example.com/x"\ndescription = "d"\nschema.request = ${schema}\n`;
    const repo = compile({
      'connectors/open-api/a.mtr': connector('{ properties = { x = { "$ref" = "#/definitions/nope" } } }'),
      'connectors/open-api/b.mtr': connector('{ properties = { x = { type = "string" pattern = "([" } } }'),
      'connectors/open-api/c.mtr': connector(
        '{ definitions = { id = { type = "string" } } properties = { x = { "$ref" = "#/definitions/id" } } }',
      ),
    });
    expect(where(repo.diagnostics)).toEqual([
      'connectors/open-api/a.mtr:4:50 mtr:schema:invalid',
      'connectors/open-api/b.mtr:4:67 mtr:schema:invalid',
    ]);
  });

  it('refuses a connector url that is not on the public internet, unless the operator allows it', () => {
    const files = {
      'connectors/open-api/c.mtr':
        'method = "GET"\nurl = "http://127.0.0.1:8080/{id}"\ndescription = "d"\nparameters.path = [ { name = "id" } ]\n',
      'connectors/open-api/d.mtr': 'method = "GET"\nurl = "https://orders-api/x"\ndescription = "d"\n',
    };
    const repo = compile(files);
    expect(where(repo.diagnostics)).toEqual([
      'connectors/open-api/c.mtr:2:7 api:connectors:address-blocked',
      'connectors/open-api/d.mtr:2:7 api:connectors:address-blocked',
    ]);
    expect(repo.diagnostics[0].message).toContain("won't call 127.0.0.1");
    const allowed = compile(files, { egress: createEgressPolicy({ allow: '127.0.0.1, orders-api' }) });
    expect(allowed.diagnostics).toEqual([]);
  });

  it('lets an auth = "Maitento" connector call only the platform origin', () => {
    const files = {
      'connectors/open-api/k.mtr':
        'method = "GET"\nurl = "https://mt.example.com/v1/knowledge"\ndescription = "d"\nauth = "Maitento"\n',
    };
    expect(where(compile(files).diagnostics)).toEqual(['connectors/open-api/k.mtr:2:7 api:connectors:address-blocked']);
    expect(compile(files, { platformOrigin: 'https://mt.example.com' }).diagnostics).toEqual([]);
    expect(where(compile(files, { platformOrigin: 'https://other.example.com' }).diagnostics)).toEqual([
      'connectors/open-api/k.mtr:2:7 api:connectors:address-blocked',
    ]);
  });
});

describe('binding checks', () => {
  it('reports tool bindings that fill no parameter or body field, and overlapping ones', () => {
    const repo = compile({
      ...base,
      'external-operations/open-api/refund.mtr': `connector = @ref("refund")
guidance = "g"
bindings.request:adress/city = "Paris"
bindings.request:address = { city = "Paris" }
bindings.request:address/zip = "75001"
bindings.query:limit = 5
`,
    });
    expect(where(repo.diagnostics)).toEqual([
      'external-operations/open-api/refund.mtr:3:10 mtr:binding:unknown-target',
      'external-operations/open-api/refund.mtr:5:10 mtr:binding:duplicate',
      'external-operations/open-api/refund.mtr:6:10 mtr:binding:unknown-target',
    ]);
    expect(repo.diagnostics[0].hint).toBe('did you mean "address/city"?');
  });

  it('reports a run-input binding on a field the tool fixes, two on one field, and an unknown target', () => {
    const repo = compile({
      ...base,
      'external-operations/open-api/refund.mtr':
        'connector = @ref("refund")\nguidance = "g"\nbindings.request:reason = "x"\n',
      'interactions/one-shot/i.mtr': `agent = { name = "S" agent = @ref("support") }
task = "t"
functions.openApi = [ { ref = @ref("refund") } ]
inputs.functions.binding = [
  { function = @ref("refund") name = "a" target = "reason" },
  { function = @ref("refund") name = "b" target = "amount" },
  { function = @ref("refund") name = "c" target = "amount" },
  { function = @ref("refund") name = "d" target = "orderid" type = "path" },
]
`,
    });
    expect(where(repo.diagnostics)).toEqual([
      'interactions/one-shot/i.mtr:5:51 mtr:binding:conflict',
      'interactions/one-shot/i.mtr:7:51 mtr:binding:duplicate',
      'interactions/one-shot/i.mtr:8:51 mtr:binding:unknown-target',
    ]);
  });

  it('binds fields inside a local $ref (as mt import openapi writes them), fixed or from run inputs, and hides them', () => {
    // A body whose address is a $ref into $defs, and a recursive $defs (a node holding nodes) that must not loop.
    const connector = `method = "POST"
url = "https://orders.example.com/orders"
description = "d"
schema.request = {
  "$defs" = {
    Address = { type = "object" properties = { city = { type = "string" } zip = { type = "string" } } required = [ "city" ] }
    Node = { type = "object" properties = { name = { type = "string" } children = { type = "array" items = { "$ref" = "#/$defs/Node" } } } }
  }
  type = "object"
  properties = { address = { "$ref" = "#/$defs/Address" } billing = { "$ref" = "#/$defs/Address" } tree = { "$ref" = "#/$defs/Node" } }
}
`;
    const repo = compile({
      ...base,
      'connectors/open-api/ship.mtr': connector,
      'external-operations/open-api/ship.mtr':
        'connector = @ref("ship")\nguidance = "g"\nbindings.request:address/city = "Paris"\n',
      'interactions/one-shot/i.mtr': `agent = { name = "S" agent = @ref("support") }
task = "t"
functions.openApi = [ { ref = @ref("ship") } ]
inputs.functions.binding = [
  { function = @ref("ship") name = "z" target = "address/zip" },
  { function = @ref("ship") name = "n" target = "tree/name" },
  { function = @ref("ship") name = "x" target = "address/street" },
]
`,
    });
    // The two fields inside $refs are known targets; a field the definition lacks is not, with its did-you-mean.
    expect(where(repo.diagnostics)).toEqual(['interactions/one-shot/i.mtr:7:49 mtr:binding:unknown-target']);
    const [interaction] = repo.interactions;
    const [tool] = repo.tools.filter((t) => t.name === 'ship');
    const connectorBuilt = repo.connectors.find((c) => c.name === 'ship')!;
    const request = (bound: RunBound) =>
      (toolDefinition(tool, connectorBuilt, bound).parameters as { properties: { request: Schema } }).properties
        .request;
    type Schema = { properties: Record<string, Schema> };
    // The fixed binding alone: the address is inlined without its city; billing and tree stay references.
    const fixed = request({ request: [], query: [], path: [] });
    expect(Object.keys(fixed.properties.address.properties)).toEqual(['zip']);
    // (optional, so either reference or null).
    expect(fixed.properties.billing).toEqual({ anyOf: [{ $ref: '#/$defs/Address' }, { type: 'null' }] });
    expect(fixed.properties.tree).toEqual({ anyOf: [{ $ref: '#/$defs/Node' }, { type: 'null' }] });
    // With the interaction's run-input bindings: the address has nothing left for the model, the tree keeps its
    // children (still a reference to Node inside) and loses its name.
    const withRun = request(runBoundFields(interaction, 'ship', 'S'));
    expect(Object.keys(withRun.properties)).toEqual(['billing', 'tree']);
    expect(Object.keys(withRun.properties.tree.properties)).toEqual(['children']);
  });

  it("requires agent on a binding for an agent's own tool, and refuses a tool the interaction does not give", () => {
    const repo = compile({
      ...base,
      'interactions/one-shot/i.mtr': `agent = { name = "S" agent = @ref("support") }
task = "t"
inputs.functions.binding = [
  { function = @ref("get") name = "o" target = "orderId" type = "path" },
  { function = @ref("refund") name = "p" target = "orderId" type = "path" },
]
`,
    });
    expect(where(repo.diagnostics)).toEqual([
      'interactions/one-shot/i.mtr:4:3 mtr:binding:agent-required',
      'interactions/one-shot/i.mtr:5:16 mtr:binding:function-not-given',
    ]);
  });
});

describe('interaction checks', () => {
  it('reports a %%placeholder%% that no input declares, in the task and in any other string', () => {
    const repo = compile({
      ...base,
      'interactions/one-shot/i.mtr': `agent = { name = "S %%who%%" agent = @ref("support") }
task = "Answer %%mesage%% now"
inputs.prompts = [ { name = "message" } ]
`,
    });
    expect(where(repo.diagnostics)).toEqual([
      'interactions/one-shot/i.mtr:1:21 mtr:placeholder:undeclared',
      'interactions/one-shot/i.mtr:2:16 mtr:placeholder:undeclared',
    ]);
    expect(repo.diagnostics[1].hint).toBe('did you mean "message"?');
  });

  it('reports two run inputs with one name', () => {
    const repo = compile({
      ...base,
      'interactions/one-shot/i.mtr': `agent = { name = "S" agent = @ref("support") }
task = "%%m%%"
inputs.prompts = [ { name = "m" }, { name = "m" } ]
`,
    });
    expect(where(repo.diagnostics)).toEqual(['interactions/one-shot/i.mtr:3:45 mtr:names:duplicate']);
  });
});

describe('secrets of Header connectors', () => {
  const header = ordersConnector.replace('description = "One order"', 'description = "One order"\nauth = "Header"');

  it('refuses a tool on a Header connector that nothing gives a secret', () => {
    const repo = compile({
      ...base,
      'connectors/open-api/orders.mtr': header,
      'agents/support.mtr': 'model = "openai:b"\ninstructions = "i"\n',
    });
    expect(where(repo.diagnostics)).toEqual([
      'external-operations/open-api/get.mtr:1:13 api:connectors:secret-missing',
    ]);
  });

  it('refuses an interaction that gives such a tool no secret, and accepts one with inputs.functions.auth', () => {
    const interaction = `agent = { name = "S" agent = @ref("support") }
task = "t"
`;
    const refused = compile({
      ...base,
      'connectors/open-api/orders.mtr': header,
      'interactions/one-shot/i.mtr': interaction,
    });
    expect(where(refused.diagnostics)).toEqual(['interactions/one-shot/i.mtr:1:30 api:connectors:secret-missing']);
    const accepted = compile({
      ...base,
      'connectors/open-api/orders.mtr': header,
      'interactions/one-shot/i.mtr': `${interaction}inputs.functions.auth = [ { name = "k" function = @ref("get") agent = @ref("support") header = "X-Api-Key" } ]\n`,
    });
    expect(accepted.diagnostics).toEqual([]);
  });
});

describe('a tool secret its connector never sends', () => {
  it('warns, at the tool auth, when the connector auth is not Header, and stays ok', () => {
    const repo = compile({
      'connectors/open-api/orders.mtr': ordersConnector,
      'external-operations/open-api/get.mtr':
        'connector = @ref("orders")\nguidance = "g"\nauth = { header = "X-Api-Key" secret = @ref("k") }\n',
    });
    expect(where(repo.diagnostics)).toEqual(['external-operations/open-api/get.mtr:3:1 mtr:auth:unused']);
    expect(repo.diagnostics[0]).toMatchObject({ severity: 'warning' });
    expect(repo.diagnostics[0].message).toContain('has auth = "None"');
    expect(repo.ok).toBe(true);
  });
});

describe('compileRepo', () => {
  it('never throws, whatever the input', () => {
    const inputs = [
      '',
      '= = =',
      'a = @json(',
      'x.y.z = [ { a = { b = [ @ref() ] } } ]',
      '\u0000\uffff',
      '"a" = 1\n"a".b = 2',
    ];
    for (const text of inputs) {
      for (const path of ['connectors/open-api/c.mtr', 'interactions/one-shot/i.mtr', 'x.mtr']) {
        const repo = compile({ [path]: text });
        expect(repo.ok).toBe(false);
        expect(repo.diagnostics.every((d) => d.code !== 'mtr:compiler:crashed')).toBe(true);
      }
    }
  });
});
