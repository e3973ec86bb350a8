import { expect } from 'vitest';
import { pidOfLocalPort } from './processes.js';
import type { RunsStack } from './stack.js';
import { defaultUpstreamAnswer, type UpstreamRequest } from './upstream.js';

/**
 * Makes the upstream hold the first request that matches without answering (a slow upstream), and
 * answer every later one at once. Resolves with the held request.
 */
export function holdFirst(stack: RunsStack, match: (r: UpstreamRequest) => boolean): Promise<UpstreamRequest> {
  let held = false;
  stack.upstream.setHandler((request, res) => {
    if (!held && match(request)) {
      held = true;
      return new Promise(() => {}); // never answered: the connection ends when its process dies
    }
    return defaultUpstreamAnswer(request, res);
  });
  return stack.upstream.waitFor(match, 30_000);
}

/**
 * SIGKILLs the process (server or worker) that sent `request`, found by the connection's port, and
 * removes it from the stack; returns which kind it was. Later API calls go to a surviving server.
 */
export async function killSender(stack: RunsStack, request: UpstreamRequest): Promise<'server' | 'worker'> {
  const all = [...stack.servers, ...stack.workers];
  const pid = await pidOfLocalPort(
    request.remotePort,
    all.map((p) => p.pid),
  );
  expect(pid, `no process of the test holds the connection from port ${request.remotePort}`).toBeDefined();
  const server = stack.servers.find((s) => s.pid === pid);
  if (server) {
    await server.kill();
    stack.servers.splice(stack.servers.indexOf(server), 1);
    expect(stack.servers.length, 'a server must survive to answer the API').toBeGreaterThan(0);
    stack.api = (await import('./api.js')).api(stack.servers[0].url, stack.adminKey);
    return 'server';
  }
  const worker = stack.workers.find((w) => w.pid === pid)!;
  await worker.kill();
  stack.workers.splice(stack.workers.indexOf(worker), 1);
  return 'worker';
}

/** Asserts that the upstream saw the non-GET call once, or again only with the same Idempotency-Key. */
export function expectOneCallOrSameKey(calls: UpstreamRequest[]): void {
  expect(calls.length).toBeGreaterThanOrEqual(1);
  const keys = calls.map((c) => c.headers['idempotency-key']);
  expect(
    keys.every((k) => typeof k === 'string' && k.length > 0),
    `Idempotency-Key on every call: ${JSON.stringify(keys)}`,
  ).toBe(true);
  expect(new Set(keys).size, `one Idempotency-Key for every attempt: ${JSON.stringify(keys)}`).toBe(1);
  expect(new Set(calls.map((c) => c.body)).size, 'every attempt sent the same body').toBe(1);
}
