import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createEgressAgent, type Resolver } from '@maitento/egress';
import type { Agent } from 'undici';

/** The test's DNS: answers only what the table says (loopback addresses in these tests), else ENOTFOUND. */
export function resolverOf(table: Record<string, string[]>): Resolver {
  return async (hostname) => {
    const answers = table[hostname];
    if (!answers) throw Object.assign(new Error(`ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return answers.map((address) => ({ address, family: address.includes(':') ? (6 as const) : (4 as const) }));
  };
}

/** The error `promise` rejects with; fails the test when it resolves. */
export async function refusal(promise: Promise<unknown>): Promise<Error & { code?: string; details?: unknown }> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a refusal');
}

/** An HTTP server on `host` that counts the connections it accepts and the `x-api-key` headers it receives. */
export interface CountingServer {
  server: Server;
  port: number;
  connections: number;
  keys: (string | undefined)[];
}

/** Starts a {@link CountingServer} answering `body` on a free port of `host`. */
export async function countingServer(host = '127.0.0.1', body = 'reached'): Promise<CountingServer> {
  const state = { connections: 0, keys: [] } as unknown as CountingServer;
  const server = createServer((req, res) => {
    state.keys.push(req.headers['x-api-key'] as string | undefined);
    res.end(body);
  });
  server.on('connection', () => {
    state.connections += 1;
  });
  server.listen(0, host);
  await once(server, 'listening');
  state.server = server;
  state.port = (server.address() as AddressInfo).port;
  return state;
}

const agents: Agent[] = [];

/** An egress agent that {@link closeAgents} closes (call it after each test). */
export function agentFor(...args: Parameters<typeof createEgressAgent>): Agent {
  const agent = createEgressAgent(...args);
  agents.push(agent);
  return agent;
}

/** Closes every agent {@link agentFor} made since the last call. */
export async function closeAgents(): Promise<void> {
  await Promise.all(agents.splice(0).map((agent) => agent.close()));
}
