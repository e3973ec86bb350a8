import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auth, createSecret, deployOk, sampleFiles, startTestServer, type TestServer } from './helpers.js';

// Agents and interactions are readable like connectors and tools: lists, latest, versions, one version,
// and an interaction's inputs with which are required and their defaults.
let server: TestServer;

const extraFiles = [
  {
    path: 'interactions/one-shot/weather.mtr',
    content: `agent = { name = "Weather" agent = @ref("weather-agent") }
task = "What is the weather like now in %%place%%?"
inputs.prompts = [ { name = "place" description = "A town" required = true } ]
inputs.functions.binding = [
  {
    function = @ref("current-weather")
    agent = @ref("weather-agent")
    name = "latitude"
    target = "latitude"
    type = "query"
    default = 51.5
    description = "where"
  }
]
`,
  },
  {
    path: 'interactions/one-shot/support-any-shop.mtr',
    content: `agent = { name = "Support" agent = @ref("support-agent") }
task = "A customer writes: %%message%%"
inputs.prompts = [ { name = "message" required = true }, { name = "tone" required = false default = "kind" } ]
inputs.functions.auth = [
  { name = "shopKey" function = @ref("get-order") agent = @ref("support-agent") header = "X-Api-Key" required = true }
]
`,
  },
];

async function get(url: string, key = server.adminKey) {
  return server.app.inject({ method: 'GET', url, headers: auth(key) });
}

beforeAll(async () => {
  server = await startTestServer();
  await createSecret(server, 'orders-key', 'orders-secret-value');
  await deployOk(server, [...sampleFiles(), ...extraFiles]);
});

afterAll(async () => {
  await server?.close();
});

describe('agents over REST', () => {
  it('lists the agents with their latest version and whether it is enabled', async () => {
    const res = await get('/v1/agents');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual([
      { name: 'support-agent', latestVersion: 1, enabled: true },
      { name: 'weather-agent', latestVersion: 1, enabled: true },
    ]);
  });

  it('shows an agent with its model, instructions and the tool versions it pins', async () => {
    const res = await get('/v1/agents/support-agent');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      name: 'support-agent',
      version: 1,
      enabled: true,
      model: 'openai:gpt-4o-mini',
      instructions: 'Help customers with their orders.',
      tools: [{ name: 'get-order', version: 1 }],
      resource: { kind: 'agent', functions: [{ ref: 'get-order' }] },
    });
    expect(body.hash).toMatch(/^[0-9a-f]{64}$/);
    expect((await get('/v1/agents/support-agent/versions/1')).json()).toEqual(body);
  });

  it('lists versions newest first, after a deploy that changes the agent', async () => {
    const files = [...sampleFiles(), ...extraFiles].map((file) =>
      file.path === 'agents/support-agent.mtr'
        ? { ...file, content: file.content.replace('Help customers', 'Help shoppers') }
        : file,
    );
    await deployOk(server, files);
    const versions = (await get('/v1/agents/support-agent/versions')).json();
    expect(versions.map((v: { version: number }) => v.version)).toEqual([2, 1]);
    expect((await get('/v1/agents/support-agent')).json()).toMatchObject({
      version: 2,
      instructions: 'Help shoppers with their orders.',
    });
    expect((await get('/v1/agents/support-agent/versions/1')).json().instructions).toBe(
      'Help customers with their orders.',
    );
  });

  it('answers 404 api:agents:not-found for an unknown agent or version', async () => {
    for (const url of ['/v1/agents/nobody', '/v1/agents/nobody/versions', '/v1/agents/support-agent/versions/9']) {
      const res = await get(url);
      expect([res.statusCode, res.json().code], url).toEqual([404, 'api:agents:not-found']);
    }
  });
});

describe('interactions over REST', () => {
  it('lists the interactions', async () => {
    const names = (await get('/v1/interactions')).json().map((i: { name: string }) => i.name);
    expect(names).toEqual(['support', 'support-any-shop', 'weather']);
  });

  it('shows each input with its kind, whether it is required and its default', async () => {
    const res = await get('/v1/interactions/weather');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.agent).toEqual({ name: 'Weather', agent: 'weather-agent', version: 1 });
    expect(body.task).toBe('What is the weather like now in %%place%%?');
    expect(body.inputs).toEqual([
      { name: 'place', kind: 'prompt', required: true, description: 'A town' },
      {
        name: 'latitude',
        kind: 'binding',
        required: false,
        default: 51.5,
        description: 'where',
        function: 'current-weather',
        agent: 'weather-agent',
        target: 'latitude',
        type: 'query',
      },
    ]);
    expect(body.tools).toEqual([{ name: 'current-weather', version: 1 }]);
  });

  it("shows an auth input with its header, and the agent's tools at the versions the agent pins", async () => {
    const body = (await get('/v1/interactions/support-any-shop')).json();
    expect(body.inputs).toEqual([
      { name: 'message', kind: 'prompt', required: true },
      { name: 'tone', kind: 'prompt', required: false, default: 'kind' },
      {
        name: 'shopKey',
        kind: 'auth',
        required: true,
        function: 'get-order',
        agent: 'support-agent',
        header: 'X-Api-Key',
      },
    ]);
    expect(body.agent).toEqual({ name: 'Support', agent: 'support-agent', version: 2 });
    expect(body.tools).toEqual([{ name: 'get-order', version: 1 }]);
    expect(
      (await get('/v1/interactions/support-any-shop/versions')).json().map((v: { version: number }) => v.version),
    ).toEqual([2, 1]);
    expect((await get('/v1/interactions/support-any-shop/versions/1')).json().agent.version).toBe(1);
  });

  it('answers 404 api:interactions:not-found, and another namespace sees none of them', async () => {
    const res = await get('/v1/interactions/nothing/versions/1');
    expect([res.statusCode, res.json().code]).toEqual([404, 'api:interactions:not-found']);
    const created = await server.app.inject({
      method: 'POST',
      url: '/v1/namespaces',
      headers: auth(server.adminKey),
      payload: { name: 'other-team' },
    });
    const otherKey = created.json().key.key as string;
    expect((await get('/v1/interactions', otherKey)).json()).toEqual([]);
    expect((await get('/v1/interactions/weather', otherKey)).statusCode).toBe(404);
  });

  it('lets a user key read agents and interactions', async () => {
    const created = await server.app.inject({
      method: 'POST',
      url: '/v1/keys',
      headers: auth(server.adminKey),
      payload: { role: 'user', name: 'reader' },
    });
    const userKey = created.json().key as string;
    expect((await get('/v1/interactions/weather', userKey)).statusCode).toBe(200);
    expect((await get('/v1/agents', userKey)).statusCode).toBe(200);
  });
});
