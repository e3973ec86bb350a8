import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createEgressPolicy } from '@maitento/egress';
import { createGateway, type Gateway, isPreparedRequest } from '@maitento/gateway';
import { type CompiledRepo, compileRepo, readConfigRepo } from '@maitento/lang';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeResolver } from './helpers/resolver.js';
import { startRecordingUpstream, type Upstream } from '@maitento/testkit';
import { json } from './helpers/upstream.js';

// The top-level example repo, compiled by the real compiler, with each https://HOST rewritten to http://HOST:PORT
// (the same names, resolved by a resolver the test controls to a server on 127.0.0.1).
const root = fileURLToPath(new URL('../../../', import.meta.url));
let dir: string;
let upstream: Upstream;
// Maitento's own API, which the handbook search (auth = "Maitento") calls: a server of its own, the platform. The
// example's platform tools name a path on it (`url = "/v1/..."`), resolved against the gateway's platform origin.
let platform: Upstream;
let repo: CompiledRepo;
let gateway: Gateway;

beforeAll(async () => {
  upstream = await startRecordingUpstream((req, res) => json(res, 200, { ok: true, url: req.url }));
  platform = await startRecordingUpstream((_req, res) => json(res, 200, { results: [] }));
  dir = mkdtempSync(join(tmpdir(), 'mt-gateway-repo-'));
  for (const folder of ['connectors', 'external-operations', 'agents', 'interactions']) {
    cpSync(join(root, folder), join(dir, folder), { recursive: true });
  }
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const path = join(d, name);
      if (statSync(path).isDirectory()) walk(path);
      else {
        const text = readFileSync(path, 'utf8');
        writeFileSync(path, text.replace(/https:\/\/([a-z0-9.-]+)\//g, `http://$1:${upstream.port}/`));
      }
    }
  };
  walk(dir);
  const policy = createEgressPolicy({ allow: '127.0.0.1/32' });
  const platformOrigin = `http://127.0.0.1:${platform.port}`;
  repo = compileRepo(await readConfigRepo(dir), { egress: policy, platformOrigin });
  const resolver = fakeResolver({
    'api.open-meteo.com': '127.0.0.1',
    'orders.example.com': '127.0.0.1',
    'handbook.example.com': '127.0.0.1',
  });
  gateway = createGateway({
    policy,
    resolver,
    platform: { origin: platformOrigin, token: async ({ caller }) => `platform-token-of-${caller}` },
  });
});

afterAll(async () => {
  await gateway.close();
  await upstream.close();
  await platform.close();
  rmSync(dir, { recursive: true, force: true });
});

function resources(toolName: string) {
  const tool = repo.tools.find((t) => t.name === toolName);
  if (tool === undefined) throw new Error(`no tool ${toolName}: ${JSON.stringify(repo.diagnostics)}`);
  const connector = repo.connectors.find((c) => c.name === tool.connector)!;
  return { tool, connector };
}

describe('the compiled example repo through the gateway', () => {
  it('compiles without diagnostics', () => {
    expect(repo.diagnostics).toEqual([]);
  });

  it('refund-order: sends the seed argumentsJson as the body, to the order path, with the key', async () => {
    const argumentsJson =
      '{"request":{"amount":12.5,"reason":"Blue mug arrived smashed"},"additionalInputs":{"path.orderId":"A-1001"}}';
    const input = {
      ...resources('refund-order'),
      arguments: JSON.parse(argumentsJson),
      credential: { header: 'X-Api-Key', value: 'key-1' },
      idempotencyKey: 'run/call',
    };
    // The tool requires approval: the call a person approved is sent by callApproved with its hash.
    const prepared = await gateway.prepare(input);
    if (!isPreparedRequest(prepared)) throw new Error(JSON.stringify(prepared));
    const result = await gateway.callApproved(input, { hash: prepared.hash, consume: async () => undefined });
    expect(result.ok, JSON.stringify(result)).toBe(true);
    const received = upstream.requests.at(-1)!;
    expect(received).toMatchObject({
      method: 'POST',
      url: '/orders/A-1001/refund',
      body: '{"amount":12.5,"reason":"Blue mug arrived smashed"}',
    });
    expect(received.headers['x-api-key']).toBe('key-1');
  });

  it('search-handbook: the ask-handbook binding fills partitionId from the run input, and a platform token signs it', async () => {
    const interaction = repo.interactions.find((i) => i.name === 'ask-handbook')!;
    const runBindings = interaction.inputs.functions.binding
      .filter((b) => b.function === 'search-handbook')
      .map((binding) => ({ binding, value: 'kb-staff' }));
    const result = await gateway.call({
      ...resources('search-handbook'),
      arguments: { request: { query: 'parental leave' } },
      runBindings,
      caller: 'default',
    });
    expect(result.ok, JSON.stringify(result)).toBe(true);
    const sent = platform.requests.at(-1)!;
    expect(sent.url).toBe('/v1/knowledge-bases/search');
    expect(JSON.parse(sent.body)).toEqual({ query: 'parental leave', partitionId: 'kb-staff' });
    expect(sent.headers.authorization).toBe('Bearer platform-token-of-default');
  });

  it('current-weather: the weather interaction binding default fills temperature_unit when the run leaves it out', async () => {
    const interaction = repo.interactions.find((i) => i.name === 'weather')!;
    const runBindings = interaction.inputs.functions.binding
      .filter((b) => b.function === 'current-weather')
      .map((binding) => ({ binding, value: undefined }));
    const result = await gateway.call({
      ...resources('current-weather'),
      arguments: { additionalInputs: { 'query.latitude': 48.85, 'query.longitude': 2.35 } },
      runBindings,
    });
    expect(result.ok, JSON.stringify(result)).toBe(true);
    expect(upstream.requests.at(-1)!.url).toBe(
      '/v1/forecast?latitude=48.85&longitude=2.35&current=temperature_2m%2Cwind_speed_10m%2Cweather_code&temperature_unit=celsius',
    );
  });
});
