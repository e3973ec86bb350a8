import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auth, createSecret, deployOk, sampleFiles, startTestServer, type TestServer } from './helpers.js';

// Bad input on every kind of route: each answers its status with an `api:<area>:<reason>` code, and
// nothing it sends is silently dropped, coerced or stored.
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
  await createSecret(server, 'orders-key', 'orders-secret-value');
  await deployOk(server);
});

afterAll(async () => {
  await server?.close();
});

function send(method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown) {
  return server.app.inject({
    method,
    url,
    headers: auth(server.adminKey),
    ...(payload === undefined ? {} : { payload }),
  });
}

async function versionsOf(name: string): Promise<number> {
  return (await send('GET', `/v1/connectors/${name}/versions`)).json().length;
}

describe('request bodies are checked as sent', () => {
  it('refuses a deploy with a misspelt dryRun instead of ignoring the flag and deploying', async () => {
    const files = sampleFiles({ weatherUrl: 'https://api.open-meteo.com/v2/forecast' });
    const res = await send('POST', '/v1/deploy', { files, dry_run: true });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'body has an unknown field dry_run', code: 'api:request:invalid' });
    expect(await versionsOf('open-meteo-forecast')).toBe(1);
  });

  it('refuses wrong types rather than coercing them', async () => {
    const cases: [string, unknown][] = [
      ['/v1/deploy', { files: sampleFiles(), dryRun: 'true' }],
      ['/v1/deploy', { files: 'connectors/open-api/x.mtr' }],
      ['/v1/secrets', { name: 'numeric', value: 123456 }],
      ['/v1/keys', { role: ['user'] }],
      ['/v1/extops/current-weather/call', { arguments: {}, version: '1' }],
    ];
    for (const [url, payload] of cases) {
      const res = await send('POST', url, payload);
      expect(res.statusCode, `${url} ${JSON.stringify(payload)}: ${res.body}`).toBe(400);
      expect(res.json().code).toBe('api:request:invalid');
    }
    const names = (await send('GET', '/v1/secrets')).json().map((s: { name: string }) => s.name);
    expect(names).not.toContain('numeric');
    expect(await versionsOf('open-meteo-forecast')).toBe(1);
  });

  it('refuses an unknown field on every route with a body', async () => {
    const secretId = (await send('GET', '/v1/secrets')).json()[0].id;
    const cases: ['POST' | 'PUT', string, unknown][] = [
      ['POST', '/v1/secrets', { name: 'extra', value: 'v', note: 'x' }],
      ['PUT', `/v1/secrets/${secretId}`, { value: 'v2', name: 'renamed' }],
      ['POST', '/v1/keys', { role: 'user', namespace: 'other' }],
      ['POST', '/v1/namespaces', { name: 'team-x', owner: 'me' }],
      ['POST', '/v1/extops/current-weather/call', { arguments: {}, secret: 'x' }],
    ];
    for (const [method, url, payload] of cases) {
      const res = await send(method, url, payload);
      expect(res.statusCode, `${method} ${url}: ${res.body}`).toBe(400);
      expect(res.json().error).toMatch(/^body has an unknown field [a-z]+$/);
    }
    expect((await send('GET', '/v1/secrets')).json().map((s: { name: string }) => s.name)).toEqual(['orders-key']);
  });

  it('refuses a deploy naming one file path twice instead of picking one of them', async () => {
    const files = sampleFiles();
    const twice = { ...files[0], content: files[0].content.replace('v1/forecast', 'v9/forecast') };
    const res = await send('POST', '/v1/deploy', { files: [...files, twice] });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      error: 'body/files holds connectors/open-api/open-meteo-forecast.mtr twice',
      code: 'api:request:invalid',
    });
    expect(await versionsOf('open-meteo-forecast')).toBe(1);
  });

  it('answers a body of another media type with 415 naming that type', async () => {
    const res = await server.app.inject({
      method: 'POST',
      url: '/v1/deploy',
      headers: { ...auth(server.adminKey), 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'files=1',
    });
    expect(res.statusCode).toBe(415);
    expect(res.json()).toMatchObject({
      code: 'api:request:unsupported-media-type',
      error: 'Unsupported content type application/x-www-form-urlencoded',
    });
  });
});

describe('path parameters', () => {
  it('takes a version written as plain digits only', async () => {
    expect((await send('GET', '/v1/connectors/orders-get/versions/1')).statusCode).toBe(200);
    for (const version of ['1e0', '0x1', '%201', '1.0', '+1', 'abc', '0', '-1', '99999999999']) {
      const res = await send('GET', `/v1/connectors/orders-get/versions/${version}`);
      expect(res.statusCode, `${version}: ${res.body}`).toBe(400);
      expect(res.json().code).toBe('api:request:invalid');
    }
  });

  it('answers a NUL byte or a control character in a name with 400, not a database error', async () => {
    for (const name of ['%00', 'a%00b', 'a%0Ab']) {
      const res = await send('GET', `/v1/connectors/${name}`);
      expect(res.statusCode, `${name}: ${res.body}`).toBe(400);
      expect(res.json().code).toBe('api:request:invalid');
    }
    expect(server.logs.join('')).not.toMatch(/"level":50/);
  });

  it('treats a name with dots and slashes as a name: not found, nothing else reached', async () => {
    const res = await send('GET', '/v1/connectors/..%2F..%2Forders-get');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({
      error: 'No connector ../../orders-get in this namespace',
      code: 'api:connectors:not-found',
    });
  });

  it('answers a long name with 404 like any unknown one, and a bad URL or an over-long one with a code', async () => {
    const long = await send('GET', `/v1/extops/${'a'.repeat(300)}`);
    expect(long.statusCode).toBe(404);
    expect(long.json().code).toBe('api:extops:not-found');
    for (const url of [`/v1/extops/${'a'.repeat(1200)}`, '/v1/connectors/%E0%A4%A']) {
      const res = await send('GET', url);
      expect(res.statusCode, res.body).toBe(400);
      expect(Object.keys(res.json()).sort()).toEqual(['code', 'error']);
      expect(res.json().code).toBe('api:request:invalid');
    }
  });
});

describe('deploys of text the database cannot hold', () => {
  it('refuses a NUL or a lone surrogate with 422 on the dry run and the deploy alike, storing nothing', async () => {
    const connector = (extra: string) => ({
      path: 'connectors/open-api/odd-text.mtr',
      content: `method = "GET"\nurl = "https://odd.example.com/x"\ndescription = "odd"\n${extra}\n`,
    });
    const variants = [
      connector('parameters.query = [ { name = "q" description = "a\\u0000b" } ]'),
      connector('schema.response = { type = "object" properties = { "k\\u0000" = { type = "string" } } }'),
      connector('parameters.query = [ { name = "q" description = "half \\ud800 a pair" } ]'),
      { ...connector(''), path: 'connectors/open-api/odd\u0000name.mtr' },
    ];
    for (const file of variants) {
      for (const dryRun of [true, false]) {
        const res = await send('POST', '/v1/deploy', { files: [...sampleFiles(), file], dryRun });
        expect(res.statusCode, `${file.path} ${dryRun}: ${res.body}`).toBe(422);
        expect(res.json().code).toBe('api:deploy:unstorable-text');
      }
    }
    const names = (await send('GET', '/v1/connectors')).json().map((c: { name: string }) => c.name);
    expect(names).toEqual(['open-meteo-forecast', 'orders-get']);
    expect(server.logs.join('')).not.toMatch(/"level":50/);
  });
});
