import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auth, createSecret, deployOk, sampleFiles, startTestServer, type TestServer } from './helpers.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
  await createSecret(server, 'orders-key', 'orders-secret-value');
});

afterAll(async () => {
  await server?.close();
});

describe('deploy over REST', () => {
  it('deploys the sample repo, and a second deploy of it changes nothing', async () => {
    const first = await deployOk(server);
    expect(first.applied).toBe(true);
    expect(first.changes.map((c: { action: string }) => c.action)).toEqual(Array(7).fill('create'));
    const second = await deployOk(server);
    expect(second.changes.map((c: { action: string }) => c.action)).toEqual(Array(7).fill('unchanged'));
  });

  it('makes no version for a change of comments and layout only', async () => {
    const files = sampleFiles().map((file) =>
      file.path.endsWith('orders-get.mtr')
        ? {
            ...file,
            content: `// Orders API, reformatted.\n\nauth    =   "Header"\nmethod = "GET"\n\n${file.content
              .split('\n')
              .filter((line) => !line.startsWith('auth') && !line.startsWith('method'))
              .join('\n')}\n// end\n`,
          }
        : file,
    );
    const plan = await deployOk(server, files);
    expect(plan.changes.map((c: { action: string }) => c.action)).toEqual(Array(7).fill('unchanged'));
  });

  it('a dry run of a changed connector lists it, its tool and that tool agent as updates, and writes nothing', async () => {
    const files = sampleFiles({ ordersUrl: 'https://orders.example.com/v2/orders/{orderId}' });
    const dry = await server.app.inject({
      method: 'POST',
      url: '/v1/deploy',
      headers: auth(server.adminKey),
      payload: { files, dryRun: true },
    });
    expect(dry.statusCode, dry.body).toBe(200);
    const updates = dry
      .json()
      .changes.filter((c: { action: string }) => c.action === 'update')
      .map((c: { kind: string; name: string; version: number }) => `${c.kind}:${c.name}@${c.version}`);
    expect(updates).toEqual([
      'connector:orders-get@2',
      'tool:get-order@2',
      'agent:support-agent@2',
      'interaction:support@2',
    ]);
    const versions = await server.app.inject({
      method: 'GET',
      url: '/v1/connectors/orders-get/versions',
      headers: auth(server.adminKey),
    });
    expect(versions.json().map((v: { version: number }) => v.version)).toEqual([1]);
  });

  it('refuses a repo with errors with 422 and its diagnostics, and deploys nothing', async () => {
    const files = [
      ...sampleFiles(),
      {
        path: 'agents/broken.mtr',
        content: 'model = "openai:gpt-4o-mini"\ninstructions = "x"\nfunctions = [ { ref = @ref("nothing-here") } ]\n',
      },
    ];
    const res = await server.app.inject({
      method: 'POST',
      url: '/v1/deploy',
      headers: auth(server.adminKey),
      payload: { files },
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().code).toBe('api:deploy:invalid');
    expect(res.json().diagnostics[0]).toMatchObject({ file: 'agents/broken.mtr', severity: 'error' });
    const agents = await server.app.inject({ method: 'GET', url: '/v1/agents', headers: auth(server.adminKey) });
    expect(agents.json().map((a: { name: string }) => a.name)).toEqual(['support-agent', 'weather-agent']);
  });

  it('refuses a repo naming a secret the namespace does not have (api:secrets:not-found)', async () => {
    const files = sampleFiles().map((file) =>
      file.path.endsWith('get-order.mtr')
        ? { ...file, content: file.content.replace('orders-key', 'missing-key') }
        : file,
    );
    const res = await server.app.inject({
      method: 'POST',
      url: '/v1/deploy',
      headers: auth(server.adminKey),
      payload: { files },
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().diagnostics.map((d: { code: string }) => d.code)).toContain('api:secrets:not-found');
  });

  it('serves connector and tool versions with the pinned connector and the model-facing definition', async () => {
    const tool = await server.app.inject({
      method: 'GET',
      url: '/v1/extops/get-order',
      headers: auth(server.adminKey),
    });
    expect(tool.statusCode).toBe(200);
    expect(tool.json()).toMatchObject({
      name: 'get-order',
      version: 1,
      enabled: true,
      connector: { name: 'orders-get', version: 1 },
      resource: { kind: 'tool', auth: { header: 'X-Api-Key', secret: 'orders-key' } },
      definition: { name: 'get-order', description: 'Looks up an order by its id.' },
    });
    expect(tool.json().hash).toMatch(/^[0-9a-f]{64}$/);
    const connector = await server.app.inject({
      method: 'GET',
      url: '/v1/connectors/orders-get/versions/1',
      headers: auth(server.adminKey),
    });
    expect(connector.json().resource).toMatchObject({ method: 'GET', auth: 'Header' });
    const list = await server.app.inject({ method: 'GET', url: '/v1/connectors', headers: auth(server.adminKey) });
    expect(list.json()).toEqual([
      { name: 'open-meteo-forecast', latestVersion: 1, enabled: true },
      { name: 'orders-get', latestVersion: 1, enabled: true },
    ]);
  });
});

describe('errors and the API description', () => {
  it('answers an unknown route with 404 and a code', async () => {
    const res = await server.app.inject({ method: 'GET', url: '/v1/nothing', headers: auth(server.adminKey) });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'No route GET /v1/nothing', code: 'api:request:not-found' });
  });

  it('answers an invalid body with 400 and api:request:invalid', async () => {
    const res = await server.app.inject({
      method: 'POST',
      url: '/v1/keys',
      headers: auth(server.adminKey),
      payload: { role: 'root' },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('api:request:invalid');
  });

  it('answers malformed JSON with 400 and a code, and takes an empty JSON body as no body', async () => {
    const headers = { ...auth(server.adminKey), 'content-type': 'application/json' };
    const bad = await server.app.inject({ method: 'POST', url: '/v1/keys', headers, payload: '{"role":' });
    expect([bad.statusCode, bad.json().code]).toEqual([400, 'api:request:invalid']);
    const empty = await server.app.inject({
      method: 'POST',
      url: '/v1/connectors/orders-get/versions/1/enable',
      headers,
      payload: '',
    });
    expect(empty.json()).toEqual({ name: 'orders-get', version: 1, enabled: true });
  });

  it('answers a missing or unknown key with 401', async () => {
    const none = await server.app.inject({ method: 'GET', url: '/v1/connectors' });
    expect([none.statusCode, none.json().code]).toEqual([401, 'api:auth:missing-key']);
    const wrong = await server.app.inject({ method: 'GET', url: '/v1/connectors', headers: auth('mt_wrong') });
    expect([wrong.statusCode, wrong.json().code]).toEqual([401, 'api:auth:invalid-key']);
  });

  it('serves an OpenAPI document describing the routes', async () => {
    const res = await server.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toMatch(/^3\./);
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/v1/deploy', '/v1/secrets/{id}', '/v1/extops/{name}/call', '/v1/namespaces']),
    );
  });
});
