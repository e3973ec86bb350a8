import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { APIConnectionError, Maitento, NotFoundError } from '@maitento/sdk/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpResponse, httpFetch } from '../src/internal/http-fetch.js';

// The CLI's `fetch` on node:http (issue #22: Node.js's fetch loads undici, ~0.12 s of CPU a command).
const mtBin = join(fileURLToPath(new URL('../../../', import.meta.url)), 'packages/cli/bin/mt.js');
let server: Server;
let base: string;
const seen: { method: string; url: string; headers: Record<string, unknown>; body: string }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      });
      if (req.url === '/v1/connectors') {
        res.setHeader('content-type', 'application/json');
        res.setHeader('x-request-id', 'r-1');
        res.end('[{"name":"orders","latestVersion":1,"enabled":true}]');
      } else if (req.url === '/bytes') {
        res.end(Buffer.from([0, 1, 2, 255]));
      } else if (req.url === '/events') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('id: 1\ndata: one\n\n');
        setTimeout(() => res.end('id: 2\ndata: two\n\n'), 20);
      } else {
        res.statusCode = 404;
        res.setHeader('content-type', 'application/json');
        res.end('{"error":"no such thing","code":"api:connectors:not-found"}');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('httpFetch', () => {
  it('sends the method, headers and body, and reads the status, headers and body as text, JSON or bytes', async () => {
    const res = await httpFetch(`${base}/v1/connectors`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer k' },
      body: '{"a":"é"}',
    });
    expect([res.status, res.ok, res.headers.get('X-Request-Id')]).toEqual([200, true, 'r-1']);
    expect(await res.json()).toEqual([{ name: 'orders', latestVersion: 1, enabled: true }]);
    await expect(res.text()).rejects.toThrow('already read');
    expect(seen.at(-1)).toMatchObject({ method: 'POST', body: '{"a":"é"}' });
    expect(seen.at(-1)?.headers).toMatchObject({ authorization: 'Bearer k', 'content-length': '10' });
    const bytes = await httpFetch(`${base}/bytes`);
    expect([...new Uint8Array(await bytes.arrayBuffer())]).toEqual([0, 1, 2, 255]);
  });

  it('streams a body as a web stream, and rejects with the socket error or the abort', async () => {
    const res = await httpFetch(`${base}/events`);
    let text = '';
    for await (const chunk of res.body as ReadableStream<Uint8Array>) text += Buffer.from(chunk).toString();
    expect(text).toBe('id: 1\ndata: one\n\nid: 2\ndata: two\n\n');
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await expect(httpFetch(`http://127.0.0.1:${port}/`)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    const controller = new AbortController();
    controller.abort(new Error('given up'));
    await expect(httpFetch(`${base}/events`, { signal: controller.signal })).rejects.toThrow('given up');
  });

  it("serves the SDK's client: its answers stay HttpResponse, errors keep their codes", async () => {
    const client = new Maitento({
      baseUrl: base,
      apiKey: 'k',
      maxRetries: 0,
      fetch: httpFetch as unknown as typeof fetch,
    });
    expect(await client.connectors.list()).toEqual([{ name: 'orders', latestVersion: 1, enabled: true }]);
    const raw = await client.requestRaw({ method: 'GET', path: '/bytes' });
    expect(raw).toBeInstanceOf(HttpResponse);
    expect([...new Uint8Array(await raw.arrayBuffer())]).toEqual([0, 1, 2, 255]);
    const missing = await client.request({ method: 'GET', path: '/nope' }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(NotFoundError);
    expect((missing as NotFoundError).code).toBe('api:connectors:not-found');
    const down = new Maitento({
      baseUrl: 'http://127.0.0.1:9',
      maxRetries: 0,
      fetch: httpFetch as unknown as typeof fetch,
    });
    const failed = await down.connectors.list().catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(APIConnectionError);
    expect((failed as Error).message).toContain('ECONNREFUSED');
  });

  it('spares a command that calls the server the load of undici', async () => {
    // Node.js lists every internal module it loaded in process.moduleLoadList; its fetch, Response and Headers are
    // internal/deps/undici/undici.
    const report =
      "process.on('exit',()=>process.stderr.write('undici:'+process.moduleLoadList.some(m=>m.includes('undici'))))";
    const stderr = await new Promise<string>((resolve) => {
      execFile(
        process.execPath,
        ['--import', `data:text/javascript,${encodeURIComponent(report)}`, mtBin, 'connector-list', '--json'],
        { env: { PATH: process.env.PATH ?? '', MT_API_URL: base, MT_API_KEY: 'k' }, timeout: 20_000 },
        (_error, _stdout, err) => resolve(err),
      );
    });
    expect(stderr).toContain('undici:false');
  });
});
