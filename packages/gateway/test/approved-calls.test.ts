import { createEgressPolicy } from '@maitento/egress';
import { createGateway, type Gateway, gatewayErrors, isPreparedRequest, type ToolCallInput } from '@maitento/gateway';
import type { Connector, Tool } from '@maitento/lang';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRecordingUpstream, type Upstream } from '@maitento/testkit';
import { json } from './helpers/upstream.js';

let upstream: Upstream;
// The platform's own origin takes only auth = "Maitento" calls: header-auth calls go to another server.
let platformApi: Upstream;
let gateway: Gateway;
let tokens = 0;

beforeAll(async () => {
  upstream = await startRecordingUpstream((_req, res) => json(res, 200, { done: true }));
  platformApi = await startRecordingUpstream((_req, res) => json(res, 200, { done: true }));
  gateway = createGateway({
    policy: createEgressPolicy({ allow: '127.0.0.1/32' }),
    // Every call gets a fresh platform token, as a real server issues them.
    platform: { origin: `http://127.0.0.1:${platformApi.port}`, token: async () => `mt-token-${++tokens}` },
  });
});
afterAll(async () => {
  await gateway.close();
  await upstream.close();
  await platformApi.close();
});

const tool = (connector: string): Tool => ({
  kind: 'tool',
  name: 'refund',
  connector,
  guidance: 'g',
  bindings: { request: {}, query: {}, path: {} },
  requiresApproval: true,
});

function connector(auth: 'Header' | 'Maitento'): Connector {
  return {
    kind: 'connector',
    name: `refunds-${auth}`,
    method: 'POST',
    url: `http://127.0.0.1:${(auth === 'Maitento' ? platformApi : upstream).port}/refunds?mode=full`,
    description: 'd',
    parameters: { path: [], query: [] },
    schema: { request: { type: 'object' } },
    auth,
  };
}

function input(auth: 'Header' | 'Maitento', over: Partial<ToolCallInput> = {}): ToolCallInput {
  const c = connector(auth);
  return {
    tool: tool(c.name),
    connector: c,
    arguments: { request: { amount: 5 } },
    ...(auth === 'Header' ? { credential: { header: 'X-Api-Key', value: 'secret-1' } } : {}),
    idempotencyKey: 'run-1:1:0',
    ...over,
  };
}

async function hashOf(call: ToolCallInput): Promise<string> {
  const prepared = await gateway.prepare(call);
  if (!isPreparedRequest(prepared)) throw new Error(JSON.stringify(prepared));
  return prepared.hash;
}

const allow = { consume: async () => undefined };

describe('the approval hash and callApproved', () => {
  it('hashes what a person approves: not the secret, but the body, the query and the call identity', async () => {
    const base = await hashOf(input('Header'));
    expect(await hashOf(input('Header', { credential: { header: 'X-Api-Key', value: 'rotated' } }))).toBe(base);
    expect(await hashOf(input('Header', { arguments: { request: { amount: 6 } } }))).not.toBe(base);
    // The same request as another call of the run (the next turn, or the next call of the turn) is another call.
    expect(await hashOf(input('Header', { idempotencyKey: 'run-1:2:0' }))).not.toBe(base);
    expect(await hashOf(input('Header', { idempotencyKey: 'run-1:1:1' }))).not.toBe(base);
  });

  it('sends an auth = "Maitento" call that requires approval after approval, although its platform token is new', async () => {
    const approved = await hashOf(input('Maitento'));
    const before = platformApi.requests.length;
    const result = await gateway.callApproved(input('Maitento'), { hash: approved, ...allow });
    expect(result.ok, JSON.stringify(result)).toBe(true);
    expect(platformApi.requests.slice(before)).toHaveLength(1);
    expect(platformApi.requests.at(-1)!.headers.authorization).toBe(`Bearer mt-token-${tokens}`);
  });

  it('sends nothing when the request differs from the approved one, or when consume refuses', async () => {
    const approved = await hashOf(input('Header'));
    const before = upstream.requests.length;
    const changed = await gateway.callApproved(input('Header', { arguments: { request: { amount: 500 } } }), {
      hash: approved,
      ...allow,
    });
    expect(changed).toMatchObject({ ok: false, code: 'api:approvals:request-changed' });
    const refused = await gateway.callApproved(input('Header'), {
      hash: approved,
      consume: async () => gatewayErrors.create('api:gateway:secret-not-found', { secret: 's', connector: 'c' }),
    });
    expect(refused).toMatchObject({ ok: false, code: 'api:gateway:secret-not-found' });
    expect(upstream.requests.length).toBe(before);
  });

  it('refuses a tool that requires approval through call(), sending nothing', async () => {
    const before = upstream.requests.length;
    expect(await gateway.call(input('Header'))).toMatchObject({ ok: false, code: 'api:approvals:required' });
    expect(upstream.requests.length).toBe(before);
  });
});
