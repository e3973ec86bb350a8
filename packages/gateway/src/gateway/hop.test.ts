import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendHop } from './hop.js';

const text = randomBytes(45_000).toString('hex');
const gzipped = gzipSync(text);
const sockets = new Set<unknown>();
let server: Server;
let origin: string;
let agent: Agent;

beforeAll(async () => {
  server = createServer((req, res) => {
    sockets.add(req.socket);
    switch (req.url) {
      case '/text':
        res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(text.length) });
        res.end(text);
        return;
      case '/gzip':
        res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
        res.end(gzipped);
        return;
      case '/redirect-big':
        res.writeHead(302, { location: '/text', 'content-type': 'text/plain' });
        res.end('r'.repeat(300_000));
        return;
      case '/never':
        return;
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  agent = new Agent();
});

afterAll(async () => {
  await agent.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function hop(path: string, limit: number, signal = AbortSignal.timeout(2_000)) {
  return sendHop(agent, { origin, path, method: 'GET' }, signal, limit, 'test-tool');
}

describe('one hop', () => {
  it('reads a body read whole and keeps the connection for the next request', async () => {
    sockets.clear();
    const first = await hop('/text', 100_000);
    // undici puts a free connection back in its pool a turn after the response ends (so does its request API).
    await new Promise((resolve) => setImmediate(resolve));
    const second = await hop('/text', 100_000);
    expect(first.read).toEqual({ text });
    expect(second.read).toEqual({ text });
    expect(sockets.size).toBe(1);
  });

  it('cuts a body at the limit and says how large it was declared', async () => {
    const response = await hop('/text', 1_000);
    expect(response.read).toEqual({ text: text.slice(0, 1_000), truncated: { limit: 1_000, size: 90_000 } });
  });

  it('decodes a gzip body larger than the stream buffer exactly', async () => {
    expect(gzipped.length).toBeGreaterThan(32 * 1024);
    const response = await hop('/gzip', 100_000);
    expect(response.read).toEqual({ text });
  });

  it('gives the Location of a redirect with a large body, and no body', async () => {
    const response = await hop('/redirect-big', 100_000);
    expect(response.statusCode).toBe(302);
    expect(response.location).toBe('/text');
    expect(response.read).toBeUndefined();
  });

  it('rejects with the deadline reason when the call is cancelled while waiting for the answer', async () => {
    const controller = new AbortController();
    const pending = hop('/never', 100_000, controller.signal);
    setTimeout(() => controller.abort(new Error('cancelled here')), 50);
    await expect(pending).rejects.toThrow('cancelled here');
  });

  it('sends nothing when the deadline has already passed', async () => {
    sockets.clear();
    await expect(hop('/text', 100_000, AbortSignal.abort(new Error('too late')))).rejects.toThrow('too late');
    expect(sockets.size).toBe(0);
  });
});
