import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auth, startTestServer, type TestServer } from './helpers.js';

// HTTP semantics as generic clients read them: 405 with Allow for a wrong method on a known path, and
// a 401 that names the Bearer scheme (REST and /mcp), over a real listening server.
let server: TestServer;
let url: string;

beforeAll(async () => {
  server = await startTestServer();
  url = await server.app.listen({ host: '127.0.0.1', port: 0 });
});

afterAll(async () => {
  await server?.close();
});

describe('a wrong method on a known path', () => {
  it('answers 405 with the methods the path takes in Allow and a coded body', async () => {
    const res = await fetch(`${url}/v1/secrets`, { method: 'PATCH', headers: auth(server.adminKey) });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD, POST');
    expect(await res.json()).toEqual({
      error: 'No route PATCH /v1/secrets; this path takes GET, HEAD, POST',
      code: 'api:request:method-not-allowed',
    });
  });

  it('matches paths with parameters the way the router does', async () => {
    const res = await fetch(`${url}/v1/secrets/some-secret?x=1`, { method: 'POST', headers: auth(server.adminKey) });
    expect(res.status).toBe(405);
    const allow = res.headers.get('allow')?.split(', ');
    expect(allow).toContain('DELETE');
    expect(allow).toContain('PUT');
    expect(allow).not.toContain('POST');
    expect((await res.json()).code).toBe('api:request:method-not-allowed');
  });

  it('answers a wrong method on /mcp with 405 too', async () => {
    const res = await fetch(`${url}/mcp`, { method: 'PUT', headers: auth(server.adminKey) });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toContain('POST');
  });

  it('still answers 404 for a path no route has', async () => {
    const res = await fetch(`${url}/v1/no-such-thing`, { method: 'PATCH', headers: auth(server.adminKey) });
    expect(res.status).toBe(404);
    expect(res.headers.get('allow')).toBeNull();
    expect((await res.json()).code).toBe('api:request:not-found');
  });
});

describe('a refused API key', () => {
  it('answers 401 with WWW-Authenticate: Bearer on REST', async () => {
    const none = await fetch(`${url}/v1/secrets`);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer realm="maitento"');
    const wrong = await fetch(`${url}/v1/secrets`, { headers: auth('mt_not-a-key') });
    expect([wrong.status, (await wrong.json()).code]).toEqual([401, 'api:auth:invalid-key']);
    expect(wrong.headers.get('www-authenticate')).toBe('Bearer realm="maitento"');
  });

  it('answers 401 with WWW-Authenticate: Bearer on /mcp', async () => {
    const res = await fetch(`${url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect([res.status, (await res.json()).code]).toEqual([401, 'api:auth:missing-key']);
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="maitento"');
  });

  it('sends no WWW-Authenticate when the key is accepted', async () => {
    const res = await fetch(`${url}/v1/secrets`, { headers: auth(server.adminKey) });
    expect(res.status).toBe(200);
    expect(res.headers.get('www-authenticate')).toBeNull();
  });
});
