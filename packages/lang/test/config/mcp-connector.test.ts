import { createEgressPolicy } from '@maitento/egress';
import { type Diagnostic, formatMtr, interactionTools, type RemoteTool } from '@maitento/lang';
import { newAjv } from '@maitento/lang/json-schema';
import { describe, expect, it } from 'vitest';
import { compile, where } from './helpers.js';

const issuesConnector = `url = "https://mcp.example.com/mcp"
tool = "search_issues"
auth = "Header"
`;

const searchTool = `connector = @ref("issues")
guidance = "Searches the issue tracker."
bindings.request:repo = "acme/shop"
auth = { header = "Authorization" secret = @ref("tracker-token") }
`;

const repo = {
  'connectors/mcp/issues.mtr': issuesConnector,
  'external-operations/open-api/search.mtr': searchTool,
};

const inputSchema = {
  type: 'object',
  properties: {
    repo: { type: 'string' },
    query: { type: 'string', description: 'Words to look for' },
    limit: { type: 'integer' },
  },
  required: ['repo', 'query'],
};

const listed = (remote: RemoteTool, name = 'issues') => ({ remoteTools: new Map([[name, remote]]) });

/** The one diagnostic of a compile, as `file:line:column code`, with its message and hint. */
function only(diagnostics: Diagnostic[]): { at: string; message: string; hint?: string } {
  expect(where(diagnostics)).toHaveLength(1);
  const [d] = diagnostics;
  return { at: where(diagnostics)[0], message: d.message, hint: d.hint };
}

describe('an MCP connector (connectors/mcp/)', () => {
  it('compiles without the remote tools (mt check): no request schema, an open request in the definition', () => {
    const compiled = compile(repo);
    expect(compiled.diagnostics).toEqual([]);
    expect(compiled.sources).toEqual([
      { kind: 'connector', name: 'issues', file: 'connectors/mcp/issues.mtr' },
      { kind: 'tool', name: 'search', file: 'external-operations/open-api/search.mtr' },
    ]);
    expect(compiled.connectors).toEqual([
      {
        kind: 'connector',
        name: 'issues',
        method: 'POST',
        url: 'https://mcp.example.com/mcp',
        mcp: { url: 'https://mcp.example.com/mcp', tool: 'search_issues' },
        description: '',
        parameters: { path: [], query: [] },
        schema: {},
        auth: 'Header',
      },
    ]);
    // The key order is the one of an HTTP connector, so that the stored content is always written alike.
    expect(Object.keys(compiled.connectors[0])).toEqual([
      'kind',
      'name',
      'method',
      'url',
      'mcp',
      'description',
      'parameters',
      'schema',
      'auth',
    ]);
    expect(compiled.tools[0].auth).toEqual({ header: 'Authorization', secret: 'tracker-token' });
    expect(compiled.definitions.get('search')).toEqual({
      name: 'search',
      description: 'Searches the issue tracker.',
      parameters: {
        type: 'object',
        properties: {
          request: {
            type: 'object',
            description: 'The arguments of the MCP tool search_issues; their schema is read from the server at deploy',
          },
        },
        required: ['request'],
        additionalProperties: false,
      },
    });
  });

  it('takes the remote tool input schema as schema.request, and its description when the file gives none', () => {
    const compiled = compile(repo, listed({ description: 'Search issues by words', inputSchema }));
    expect(compiled.diagnostics).toEqual([]);
    expect(compiled.connectors[0]).toEqual({
      kind: 'connector',
      name: 'issues',
      method: 'POST',
      url: 'https://mcp.example.com/mcp',
      mcp: { url: 'https://mcp.example.com/mcp', tool: 'search_issues' },
      description: 'Search issues by words',
      parameters: { path: [], query: [] },
      schema: { request: inputSchema },
      auth: 'Header',
    });
    // The bound repo is left out; limit is optional, so nullable.
    expect(compiled.definitions.get('search')?.parameters).toEqual({
      type: 'object',
      properties: {
        request: {
          type: 'object',
          properties: {
            query: { type: 'string', description: 'Words to look for' },
            limit: { type: ['integer', 'null'] },
          },
          required: ['query', 'limit'],
          additionalProperties: false,
        },
      },
      required: ['request'],
      additionalProperties: false,
    });
  });

  it("keeps the file's description over the remote one, and defaults auth to None", () => {
    const compiled = compile(
      {
        'connectors/mcp/issues.mtr':
          'url = "https://mcp.example.com/mcp"\ntool = "search_issues"\ndescription = "Mine"\n',
      },
      listed({ description: 'Theirs', inputSchema }),
    );
    expect(compiled.diagnostics).toEqual([]);
    expect(compiled.connectors[0].description).toBe('Mine');
    expect(compiled.connectors[0].auth).toBe('None');
    // Without a remote description, and none in the file, it is empty.
    const bare = compile({ 'connectors/mcp/issues.mtr': issuesConnector }, listed({ inputSchema }));
    expect(bare.connectors[0].description).toBe('');
  });

  it('compiles to the same content whatever the order of the files and of the remote tools', () => {
    const other = { description: 'x', inputSchema: { type: 'object' } };
    const a = compile(repo, {
      remoteTools: new Map([
        ['issues', { inputSchema }],
        ['zzz', other],
      ]),
    });
    const b = compile(Object.fromEntries(Object.entries(repo).reverse()), {
      remoteTools: new Map([
        ['zzz', other],
        ['issues', { inputSchema }],
      ]),
    });
    expect(JSON.stringify(b.connectors)).toBe(JSON.stringify(a.connectors));
  });

  it('refuses method, parameters and schema, saying where the input schema comes from', () => {
    const compiled = compile({
      'connectors/mcp/issues.mtr': `${issuesConnector}method = "POST"
parameters.query = [ { name = "q" } ]
schema.request = { type = "object" }
`,
    });
    expect(where(compiled.diagnostics)).toEqual([
      'connectors/mcp/issues.mtr:4:1 mtr:property:unknown',
      'connectors/mcp/issues.mtr:5:1 mtr:property:unknown',
      'connectors/mcp/issues.mtr:6:1 mtr:property:unknown',
    ]);
    expect(compiled.diagnostics.map((d) => d.message)).toEqual([
      'an MCP connector has no property method',
      'an MCP connector has no property parameters',
      'an MCP connector has no property schema',
    ]);
    expect(compiled.diagnostics[2].hint).toBe(
      "the input schema comes from the remote MCP server: a deploy reads it from the server's tools/list; remove schema",
    );
    expect(compiled.diagnostics[0].hint).toContain('tools/call');
    expect(compiled.connectors).toEqual([]);
  });

  it('needs url and tool, and suggests a misspelt property', () => {
    const compiled = compile({ 'connectors/mcp/issues.mtr': 'tol = "search"\n' });
    expect(where(compiled.diagnostics)).toEqual([
      'connectors/mcp/issues.mtr:1:1 mtr:property:unknown',
      'connectors/mcp/issues.mtr:1:1 mtr:property:required',
    ]);
    // The misspelt tool is reported once, as unknown with "did you mean".
    expect(compiled.diagnostics.map((d) => d.message)).toEqual([
      'an MCP connector has no property tol',
      'an MCP connector needs url',
    ]);
    expect(compiled.diagnostics[0].hint).toBe('did you mean "tool"?');
  });

  it('refuses auth = "Maitento" with the reason, and suggests a misspelt auth', () => {
    const maitento = only(
      compile({ 'connectors/mcp/issues.mtr': 'url = "https://mcp.example.com/mcp"\ntool = "t"\nauth = "Maitento"\n' })
        .diagnostics,
    );
    expect(maitento).toEqual({
      at: 'connectors/mcp/issues.mtr:3:8 mtr:property:value',
      message:
        'auth is "Maitento", which is only for the platform\'s own API; an MCP connector\'s auth is "None", "Header" or "OAuth2"',
      hint: 'use auth = "Header" and give the secret in the tool\'s auth (or a run input), "OAuth2", or "None"',
    });
    const typo = only(
      compile({ 'connectors/mcp/issues.mtr': 'url = "https://mcp.example.com/mcp"\ntool = "t"\nauth = "Haeder"\n' })
        .diagnostics,
    );
    expect(typo.message).toBe('auth is "Haeder"; it must be one of "None", "Header", "OAuth2"');
    expect(typo.hint).toBe('did you mean "Header"?');
  });

  it.each([
    [
      'search issues',
      'is "search issues"; an MCP tool name is letters, digits, _, -, . and /, such as "search_issues"',
    ],
    ['', 'must not be empty; it is the name the MCP server lists the tool under'],
    ['x'.repeat(129), 'is 129 characters long; an MCP tool name is 1 to 128 characters'],
  ])('refuses the tool name %j', (name, detail) => {
    const d = only(
      compile({ 'connectors/mcp/issues.mtr': `url = "https://mcp.example.com/mcp"\ntool = "${name}"\n` }).diagnostics,
    );
    expect(d.at).toBe('connectors/mcp/issues.mtr:2:8 mtr:property:value');
    expect(d.message).toBe(`tool ${detail}`);
  });

  it('accepts tool names with dots, slashes, dashes and 128 characters', () => {
    for (const name of ['admin.tools.list', 'user-profile/update', 'DATA_EXPORT_v2', 'x'.repeat(128)]) {
      const compiled = compile({ 'connectors/mcp/c.mtr': `url = "https://mcp.example.com/mcp"\ntool = "${name}"\n` });
      expect(compiled.diagnostics, name).toEqual([]);
      expect(compiled.connectors[0].mcp?.tool).toBe(name);
    }
  });

  it('judges the url by the address rules of an HTTP connector, and the egress allow option', () => {
    const files = { 'connectors/mcp/local.mtr': 'url = "http://127.0.0.1:8931/mcp"\ntool = "echo"\n' };
    const refused = only(compile(files).diagnostics);
    expect(refused.at).toBe('connectors/mcp/local.mtr:1:7 api:connectors:address-blocked');
    expect(refused.hint).toContain('set MT_EGRESS_ALLOW=127.0.0.1 ');
    expect(compile(files, { egress: createEgressPolicy({ allow: '127.0.0.1' }) }).diagnostics).toEqual([]);
  });

  it('refuses a url that is no http(s) URL, carries a password or has a placeholder', () => {
    const check = (url: string) =>
      only(compile({ 'connectors/mcp/c.mtr': `url = "${url}"\ntool = "t"\n` }).diagnostics);
    expect(check('ftp://mcp.example.com/mcp')).toMatchObject({
      at: 'connectors/mcp/c.mtr:1:7 mtr:url:invalid',
      message: 'url must be http or https, not ftp:',
    });
    expect(check('https://u:p@mcp.example.com/mcp').message).toBe(
      'url must not carry a user name or password; use auth = "Header" and a secret',
    );
    expect(check('https://mcp.example.com/{tenant}/mcp')).toMatchObject({
      at: 'connectors/mcp/c.mtr:1:32 mtr:url:invalid',
      message: "url has the placeholder {tenant}; an MCP connector's url is fixed, it has no path parameters",
    });
    expect(check('https://{host}/mcp').at).toBe('connectors/mcp/c.mtr:1:16 mtr:url:invalid');
  });

  it('reports one connector name in connectors/open-api/ and connectors/mcp/ as a duplicate', () => {
    const compiled = compile({
      'connectors/mcp/issues.mtr': issuesConnector,
      'connectors/open-api/Issues.mtr': 'method = "GET"\nurl = "https://api.example.com/issues"\ndescription = "d"\n',
    });
    expect(where(compiled.diagnostics)).toContain('connectors/open-api/Issues.mtr:1:1 mtr:repo:duplicate-name');
    const duplicate = compiled.diagnostics.find((d) => d.code === 'mtr:repo:duplicate-name');
    expect(duplicate?.message).toBe(
      'two connectors are named Issues: connectors/mcp/issues.mtr and connectors/open-api/Issues.mtr',
    );
  });

  it('reports a file in a folder under connectors/mcp/ as outside the resource folders', () => {
    const compiled = compile({ 'connectors/mcp/github/issues.mtr': issuesConnector });
    expect(where(compiled.diagnostics)).toEqual(['connectors/mcp/github/issues.mtr:1:1 mtr:repo:unknown-folder']);
    expect(compiled.diagnostics[0].hint).toContain('connectors/mcp/');
  });
});

describe('the remote input schema of an MCP connector', () => {
  it('must be valid JSON Schema: an error on the connector tool, saying why', () => {
    const d = only(
      compile(
        { 'connectors/mcp/issues.mtr': issuesConnector },
        listed({ inputSchema: { type: 'object', properties: { q: { type: 'text' } } } }),
      ).diagnostics,
    );
    expect(d.at).toBe('connectors/mcp/issues.mtr:2:8 mtr:schema:invalid');
    expect(d.message).toBe(
      "the input schema of the remote MCP tool search_issues (from the server's tools/list) is not a valid JSON Schema: properties/q/type must be equal to one of the allowed values (array, boolean, integer, null, number, object, string)",
    );
  });

  it('must be an object schema', () => {
    const message = (inputSchema: RemoteTool['inputSchema']) =>
      only(compile({ 'connectors/mcp/issues.mtr': issuesConnector }, listed({ inputSchema })).diagnostics).message;
    expect(message({ type: 'string' })).toMatch(
      /is not a valid JSON Schema: has type "string"; an MCP tool's input schema must have type "object"$/,
    );
    expect(message({})).toMatch(/has no type and no properties; an MCP tool's input schema must have type "object"$/);
    expect(message(true)).toMatch(/is true, not an object schema: an MCP tool's arguments are a JSON object$/);
    // No type, but properties: taken as an object schema.
    const untyped = { properties: { q: { type: 'string' } } };
    expect(
      compile({ 'connectors/mcp/issues.mtr': issuesConnector }, listed({ inputSchema: untyped })).diagnostics,
    ).toEqual([]);
  });

  it("moves the body's $defs to the root of the model-facing definition, where its $refs resolve", () => {
    const $schema = 'https://json-schema.org/draft/2020-12/schema';
    const modern = {
      $schema,
      type: 'object',
      $defs: { state: { enum: ['open', 'closed'] } },
      properties: { repo: { type: 'string' }, q: { type: 'string' }, state: { $ref: '#/$defs/state' } },
    };
    const compiled = compile(repo, listed({ inputSchema: modern }));
    expect(compiled.diagnostics).toEqual([]);
    const parameters = compiled.definitions.get('search')?.parameters as Record<string, unknown>;
    expect(parameters.$defs).toEqual(modern.$defs);
    expect((parameters.properties as { request: object }).request).not.toHaveProperty('$defs');
    const validate = newAjv('2020-12', { strict: false }).compile(parameters);
    expect(validate({ request: { q: 'x', state: 'open' } })).toBe(true);
    expect(validate({ request: { q: 'x', state: 'lost' } })).toBe(false);
  });

  it('takes a remote schema declaring JSON Schema 2020-12, checked against the 2020-12 meta-schema', () => {
    const $schema = 'https://json-schema.org/draft/2020-12/schema';
    const modern = {
      $schema,
      type: 'object',
      $defs: { state: { enum: ['open', 'closed'] } },
      properties: { repo: { type: 'string' }, q: { type: 'string' }, state: { $ref: '#/$defs/state' } },
    };
    const compiled = compile({ 'connectors/mcp/issues.mtr': issuesConnector }, listed({ inputSchema: modern }));
    expect(compiled.diagnostics).toEqual([]);
    expect(compiled.connectors[0]?.schema.request).toEqual(modern);
    // The model-facing definition is derived as for draft-07, without the dialect switch inside it.
    const withTool = compile(repo, listed({ inputSchema: modern }));
    expect(withTool.diagnostics).toEqual([]);
    const parameters = withTool.definitions.get('search')?.parameters as
      | { properties: { request: object } }
      | undefined;
    const request = parameters?.properties.request;
    expect(request).not.toHaveProperty('$schema');
    expect(request).toMatchObject({ type: 'object', required: ['q', 'state'], additionalProperties: false });
    // prefixItems must be an array in 2020-12 (under draft-07 it would be an unknown keyword and pass).
    const wrong = { $schema, type: 'object', properties: { pair: { type: 'array', prefixItems: {} } } };
    const d = only(
      compile({ 'connectors/mcp/issues.mtr': issuesConnector }, listed({ inputSchema: wrong })).diagnostics,
    );
    expect(d.at).toBe('connectors/mcp/issues.mtr:2:8 mtr:schema:invalid');
    expect(d.message).toContain('properties/pair/prefixItems must be array');
  });

  it('may not name a $schema of a dialect other than draft-07 and 2020-12', () => {
    const inputSchema = { $schema: 'https://json-schema.org/draft/2019-09/schema', type: 'object' };
    const d = only(compile({ 'connectors/mcp/issues.mtr': issuesConnector }, listed({ inputSchema })).diagnostics);
    expect(d.at).toBe('connectors/mcp/issues.mtr:2:8 mtr:schema:invalid');
    expect(d.message).toContain('$schema "https://json-schema.org/draft/2019-09/schema" is not supported');
  });
});

describe('tools and interactions on an MCP connector', () => {
  const pathAndQuery = `connector = @ref("issues")
guidance = "g"
bindings.path:owner = "acme"
bindings.query:state = "open"
`;

  it('refuses bindings.path and bindings.query, with or without the remote tools', () => {
    for (const options of [undefined, listed({ inputSchema })]) {
      const compiled = compile(
        {
          'connectors/mcp/issues.mtr': 'url = "https://mcp.example.com/mcp"\ntool = "search_issues"\n',
          'external-operations/open-api/t.mtr': pathAndQuery,
        },
        options,
      );
      expect(where(compiled.diagnostics)).toEqual([
        'external-operations/open-api/t.mtr:3:10 mtr:binding:unknown-target',
        'external-operations/open-api/t.mtr:4:10 mtr:binding:unknown-target',
      ]);
      expect(compiled.diagnostics.map((d) => d.message)).toEqual([
        'the binding bindings.path:owner fills nothing: the connector issues calls the MCP tool search_issues, which has no path parameters, only arguments',
        'the binding bindings.query:state fills nothing: the connector issues calls the MCP tool search_issues, which has no query parameters, only arguments',
      ]);
      expect(compiled.diagnostics[0].hint).toBe("bind the MCP tool's arguments with bindings.request:<argument>");
    }
  });

  it('checks bindings.request against the remote input schema once it is known, not before', () => {
    const files = {
      ...repo,
      'external-operations/open-api/search.mtr': `${searchTool}bindings.request:qurey = "x"\n`,
    };
    expect(compile(files).diagnostics).toEqual([]);
    const d = only(compile(files, listed({ inputSchema })).diagnostics);
    expect(d).toEqual({
      at: 'external-operations/open-api/search.mtr:5:10 mtr:binding:unknown-target',
      message:
        'the binding bindings.request:qurey fills nothing: the input schema of the MCP tool search_issues (connector issues) has no field qurey',
      hint: 'did you mean "query"?',
    });
  });

  it('warns about a tool secret when the connector auth is not Header, as for an HTTP connector', () => {
    const compiled = compile({
      'connectors/mcp/issues.mtr': 'url = "https://mcp.example.com/mcp"\ntool = "search_issues"\n',
      'external-operations/open-api/search.mtr': searchTool,
    });
    expect(where(compiled.diagnostics)).toEqual(['external-operations/open-api/search.mtr:4:1 mtr:auth:unused']);
    expect(compiled.diagnostics[0].severity).toBe('warning');
  });

  const interaction = (binding: string) => ({
    ...repo,
    'agents/triage.mtr': 'model = "openai:gpt-4o-mini"\ninstructions = "i"\nfunctions = [ { ref = @ref("search") } ]\n',
    'interactions/one-shot/triage.mtr': `agent = { name = "triage" agent = @ref("triage") }
task = "Find issues about %%topic%%"
inputs.functions.binding = [
  ${binding}
]
`,
  });

  it('refuses run-input bindings of type path and query on a tool of an MCP connector', () => {
    const compiled = compile(
      interaction(`{ name = "topic" function = @ref("search") agent = @ref("triage") target = "q" type = "query" }`),
    );
    const d = only(compiled.diagnostics);
    expect(d).toEqual({
      at: 'interactions/one-shot/triage.mtr:4:78 mtr:binding:unknown-target',
      message:
        'the binding query q fills nothing: the connector issues calls the MCP tool search_issues, which has no query parameters, only arguments',
      hint: 'write type = "request" to fill an argument of the MCP tool',
    });
    const path = compile(
      interaction(`{ name = "topic" function = @ref("search") agent = @ref("triage") target = "q" type = "path" }`),
    );
    expect(where(path.diagnostics)).toEqual(['interactions/one-shot/triage.mtr:4:78 mtr:binding:unknown-target']);
  });

  it('checks request run-input bindings against the remote input schema once it is known', () => {
    const ok = interaction(`{ name = "topic" function = @ref("search") agent = @ref("triage") target = "query" }`);
    const bad = interaction(`{ name = "topic" function = @ref("search") agent = @ref("triage") target = "topic" }`);
    expect(compile(ok, listed({ inputSchema })).diagnostics).toEqual([]);
    expect(compile(bad).diagnostics).toEqual([]);
    const d = only(compile(bad, listed({ inputSchema })).diagnostics);
    expect(d.at).toBe('interactions/one-shot/triage.mtr:4:78 mtr:binding:unknown-target');
    expect(d.message).toBe(
      'the binding request topic fills nothing: the input schema of the MCP tool search_issues (connector issues) has no field topic',
    );
    // The run input fills query, so the model is left only limit.
    const compiled = compile(ok, listed({ inputSchema }));
    const [agentTools] = interactionTools(compiled.interactions[0], compiled);
    expect(agentTools.tools[0].definition.parameters.properties).toEqual({
      request: {
        type: 'object',
        properties: { limit: { type: ['integer', 'null'] } },
        required: ['limit'],
        additionalProperties: false,
      },
    });
  });
});

describe('mt fmt on an MCP connector', () => {
  it('formats it like any .mtr file, keeping its meaning', () => {
    const result = formatMtr('url="https://mcp.example.com/mcp"   tool = "search_issues"\n  auth="Header"', 'c.mtr');
    expect(result.diagnostics).toEqual([]);
    expect(result.text).toBe(issuesConnector);
    expect(compile({ 'connectors/mcp/issues.mtr': result.text }).diagnostics).toEqual([]);
  });
});
