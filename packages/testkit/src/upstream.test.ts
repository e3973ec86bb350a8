import { get } from 'node:https';
import { afterEach, describe, expect, it } from 'vitest';
import { selfSignedCertificate } from './tls.js';
import { startRecordingUpstream, type Upstream } from './upstream.js';

let upstream: Upstream | undefined;
afterEach(async () => {
  await upstream?.close();
  upstream = undefined;
});

describe('startRecordingUpstream', () => {
  it('records each request with its body, answers {"ok":true} by default, and waitFor finds a request', async () => {
    upstream = await startRecordingUpstream();
    const waited = upstream.waitFor((r) => r.method === 'POST');
    const res = await fetch(`${upstream.origin}/orders/A-1?x=1`, { method: 'POST', body: '{"amount":5}' });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true });
    const seen = await waited;
    expect(seen).toMatchObject({ method: 'POST', url: '/orders/A-1?x=1', body: '{"amount":5}' });
    expect(upstream.requests).toHaveLength(1);
  });

  it('answers with the handler set later, and 500 when a handler throws', async () => {
    upstream = await startRecordingUpstream();
    upstream.setHandler((_request, res) => {
      res.statusCode = 201;
      res.end('made');
    });
    const made = await fetch(`${upstream.origin}/tickets`, { method: 'POST', body: 'x' });
    expect([made.status, await made.text()]).toEqual([201, 'made']);
    upstream.setHandler(() => {
      throw new Error('handler bug');
    });
    expect((await fetch(`${upstream.origin}/tickets`)).status).toBe(500);
  });

  it('rejects waitFor after the timeout, naming the requests it saw', async () => {
    upstream = await startRecordingUpstream();
    await fetch(`${upstream.origin}/a`);
    await expect(upstream.waitFor((r) => r.url === '/b', 50)).rejects.toThrow(
      /no matching request in 50 ms; saw \["GET \/a"\]/,
    );
  });

  it('listens on another loopback address, and over HTTPS, counting connections', async () => {
    upstream = await startRecordingUpstream(undefined, { host: '127.0.0.2' });
    expect(upstream.origin).toBe(`http://127.0.0.2:${upstream.port}`);
    expect(upstream.connections).toBe(0);
    await fetch(`${upstream.origin}/a`, { headers: { connection: 'close' } });
    expect(upstream.connections).toBe(1);
    await upstream.close();

    const tls = selfSignedCertificate(['upstream.test']);
    upstream = await startRecordingUpstream(undefined, { tls });
    expect(upstream.origin).toBe(`https://127.0.0.1:${upstream.port}`);
    const port = upstream.port;
    const body = await new Promise<string>((resolve, reject) => {
      get({ host: '127.0.0.1', port, path: '/secure', servername: 'upstream.test', ca: tls.cert }, (res) => {
        let text = '';
        res.on('data', (c) => {
          text += c;
        });
        res.on('end', () => resolve(text));
      }).on('error', reject);
    });
    expect(body).toBe('{"ok":true}');
    expect(upstream.requests.map((r) => r.url)).toEqual(['/secure']);
    expect(upstream.connections).toBe(1);
  });
});
