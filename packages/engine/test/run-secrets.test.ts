import { ordersRepo } from '@maitento/testkit';
import { randomBytes, randomUUID } from 'node:crypto';
import { compileRepo } from '@maitento/lang';
import { createEgressPolicy } from '@maitento/egress';
import {
  createKeyring,
  createNamespace,
  createSecret,
  deleteSecret,
  deploy,
  rotateSecret,
  rotateSecretKeys,
} from '@maitento/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeWorld, type Seen, startUpstream, waitFor, type World } from './helpers.js';

// Secrets chosen by the run (inputs.functions.auth) and secrets changing under runs: each test runs the real
// engine on PostgreSQL with the scripted model against a real upstream on 127.0.0.1 that records the key it got.
let world: World;
let upstream: Awaited<ReturnType<typeof startUpstream>>;
const holds = new Map<string, Promise<unknown>>();
const by = { keyId: 'k1', keyName: 'alice', role: 'user' as const };
const ids: Record<string, string> = {};

const getOrder = (orderId: string) => ({
  toolCalls: [
    { name: 'get-order', arguments: { additionalInputs: { 'path.orderId': orderId, 'query.verbose': null } } },
  ],
});

const extraFiles = [
  {
    path: 'interactions/one-shot/support-any-shop.mtr',
    content: `agent = { name = "Support" agent = @ref("support-agent") }
task = "A customer writes: %%message%%"
inputs.prompts = [ { name = "message" description = "What the customer wrote" required = true } ]
inputs.functions.auth = [
  { name = "shopKey" description = "The id of the secret that holds the shop's API key" function = @ref("get-order") agent = @ref("support-agent") header = "X-Api-Key" required = true },
]
`,
  },
  {
    path: 'interactions/one-shot/default-shop.mtr',
    content: `agent = { name = "Support" agent = @ref("support-agent") }
task = "A customer writes: %%message%%"
inputs.prompts = [ { name = "message" description = "What the customer wrote" required = true } ]
inputs.functions.auth = [
  { name = "shopKey" function = @ref("get-order") agent = @ref("support-agent") header = "X-Api-Key" required = false secret = @ref("shop-key") },
]
`,
  },
  {
    path: 'external-operations/open-api/get-order-bare.mtr',
    content: `connector = @ref("orders-get")
guidance = "Looks up an order by its id, with the key the run gives."
`,
  },
  {
    path: 'agents/bare-agent.mtr',
    content: `model = "scripted:support"
instructions = "Help customers with their orders."
functions = [ { ref = @ref("get-order-bare") } ]
`,
  },
  {
    path: 'interactions/one-shot/bare.mtr',
    content: `agent = { name = "Support" agent = @ref("bare-agent") }
task = "A customer writes: %%message%%"
inputs.prompts = [ { name = "message" description = "What the customer wrote" required = true } ]
inputs.functions.auth = [
  { name = "shopKey" function = @ref("get-order-bare") agent = @ref("bare-agent") header = "X-Api-Key" required = false },
]
`,
  },
];

beforeAll(async () => {
  upstream = await startUpstream((req) => ({
    // The key is echoed back: the gateway masks the call's own secret, so another shop's key would show in the run.
    body: { order: req.url, key: req.headers['x-api-key'] ?? null },
    wait: holds.get(req.url.split('?')[0]),
  }));
  world = await makeWorld();
  ids.orders = await world.secret('orders-key', 'sk-tool-own-key');
  ids.shop = await world.secret('shop-key', 'sk-default-shop-key');
  ids.alpha = await world.secret('alpha-shop', 'sk-alpha-shop-key');
  ids.beta = await world.secret('beta-shop', 'sk-beta-shop-key');
  await createNamespace(world.db, 'other');
  ids.other = (await createSecret(world.db, world.secretKey, 'other', { name: 'other-key', value: 'sk-other-ns' })).id;
  await world.deployFiles([...ordersRepo({ origin: upstream.url }), ...extraFiles]);
});

afterAll(async () => {
  await world?.close();
  await upstream?.close();
});

function callsTo(orderId: string): Seen[] {
  return upstream.seen.filter((s) => s.url.split('?')[0] === `/orders/${orderId}`);
}

async function runToEnd(interaction: string, inputs: Record<string, unknown>) {
  const engine = world.engines[0] ?? (await world.engine());
  const started = await engine.startRun(world.ns, interaction, { inputs });
  const run = await waitFor(engine, world.ns, started.id);
  const events = await engine.listEvents(world.ns, run.id);
  const results = events
    .filter((e) => e.type === 'tool-result')
    .map((e) => e.data as { ok: boolean; code: string | null; result: string })
    .map((r) => ({
      ok: r.ok,
      code: r.code,
      error: r.ok ? undefined : (JSON.parse(r.result) as { error: string }).error,
    }));
  return { run, events, results };
}

describe('secrets chosen by the run', () => {
  it('refuses a run whose secret input is not a GUID, naming the input and the value', async () => {
    const engine = world.engines[0] ?? (await world.engine());
    await expect(
      engine.startRun(world.ns, 'support-any-shop', { inputs: { message: 'x', shopKey: 'second-shop-api-key' } }),
    ).rejects.toMatchObject({
      code: 'api:interactions:input-invalid',
      status: 422,
      message: expect.stringContaining('requires valid GUID for secret ID shopKey - but value is: second-shop-api-key'),
    });
  });

  it("sends the run's secret instead of the tool's own", async () => {
    world.script('support', [getOrder('R-1'), { text: 'done' }]);
    const { run } = await runToEnd('support-any-shop', { message: 'Where is R-1?', shopKey: ids.alpha });
    expect(run.status).toBe('Completed');
    expect(callsTo('R-1').map((c) => c.headers['x-api-key'])).toEqual(['sk-alpha-shop-key']);
  });

  it('starts the run with an id that is no secret of the namespace; the tool result says so and nothing is sent', async () => {
    world.script('support', [getOrder('R-2'), { text: 'done' }]);
    const unknown = randomUUID();
    const { run, results } = await runToEnd('support-any-shop', { message: 'Where is R-2?', shopKey: unknown });
    expect(run.status).toBe('Completed');
    expect(results).toEqual([
      expect.objectContaining({
        ok: false,
        code: 'api:gateway:secret-not-found',
        error: `Could not find secret ${unknown} for connector orders-get`,
      }),
    ]);
    expect(callsTo('R-2')).toEqual([]);
  });

  it("uses the input's default secret when the run gives none", async () => {
    world.script('support', [getOrder('R-3'), { text: 'done' }]);
    await runToEnd('default-shop', { message: 'Where is R-3?' });
    expect(callsTo('R-3').map((c) => c.headers['x-api-key'])).toEqual(['sk-default-shop-key']);
  });

  it("keeps the tool's own auth when an optional input without a default is left out", async () => {
    // The refund interaction binds query.verbose, so the model leaves it out.
    world.script('support', [
      { toolCalls: [{ name: 'get-order', arguments: { additionalInputs: { 'path.orderId': 'R-4' } } }] },
      { text: 'done' },
    ]);
    const { results } = await runToEnd('refund', { message: 'Where is R-4?', orderId: 'R-4' });
    expect(results).toEqual([{ ok: true, code: null, error: undefined }]);
    expect(callsTo('R-4').map((c) => c.headers['x-api-key'])).toEqual(['sk-tool-own-key']);
  });

  it('gives api:connectors:secret-missing when a Header tool has no secret from anywhere, and sends nothing', async () => {
    world.script('support', [
      {
        toolCalls: [
          { name: 'get-order-bare', arguments: { additionalInputs: { 'path.orderId': 'R-5', 'query.verbose': null } } },
        ],
      },
      { text: 'done' },
    ]);
    const { results } = await runToEnd('bare', { message: 'Where is R-5?' });
    expect(results).toEqual([expect.objectContaining({ ok: false, code: 'api:connectors:secret-missing' })]);
    expect(callsTo('R-5')).toEqual([]);
    // Given one, the same tool sends it.
    world.script('support', [
      {
        toolCalls: [
          { name: 'get-order-bare', arguments: { additionalInputs: { 'path.orderId': 'R-6', 'query.verbose': null } } },
        ],
      },
      { text: 'done' },
    ]);
    await runToEnd('bare', { message: 'Where is R-6?', shopKey: ids.beta });
    expect(callsTo('R-6').map((c) => c.headers['x-api-key'])).toEqual(['sk-beta-shop-key']);
  });

  it("serves two shops at once: each run's call carries its own shop's key, never the other's", async () => {
    world.script('support', [getOrder('R-7'), getOrder('R-7'), { text: 'done' }]);
    const engine = world.engines[0] ?? (await world.engine());
    const runs = await Promise.all(
      [ids.alpha, ids.beta, ids.alpha, ids.beta].map((shopKey) =>
        engine.startRun(world.ns, 'support-any-shop', { inputs: { message: 'Where is R-7?', shopKey } }),
      ),
    );
    for (const r of runs) expect((await waitFor(engine, world.ns, r.id)).status).toBe('Completed');
    const keys = callsTo('R-7').map((c) => c.headers['x-api-key']);
    expect(keys.sort()).toEqual([...Array(4).fill('sk-alpha-shop-key'), ...Array(4).fill('sk-beta-shop-key')]);
    for (const r of runs) {
      const events = JSON.stringify(await engine.listEvents(world.ns, r.id));
      expect(events).toContain('[secret]');
      expect(events).not.toContain('sk-');
    }
  });

  it("never uses another namespace's secret, by id or by name: nothing is sent", async () => {
    world.script('support', [getOrder('R-8'), { text: 'done' }]);
    const { results } = await runToEnd('support-any-shop', { message: 'Where is R-8?', shopKey: ids.other });
    expect(results).toEqual([
      expect.objectContaining({ code: 'api:gateway:secret-not-found', error: expect.stringContaining(ids.other) }),
    ]);
    // By name: a tool naming a secret that only the other namespace has (deployed while this one had it, then deleted).
    const compiled = compileRepo(
      [
        {
          path: 'external-operations/open-api/get-order-other.mtr',
          content: `connector = @ref("orders-get")\nguidance = "x"\nauth = { header = "X-Api-Key" secret = @ref("other-key") }\n`,
        },
        {
          path: 'agents/other-agent.mtr',
          content: `model = "scripted:support"\ninstructions = "x"\nfunctions = [ { ref = @ref("get-order-other") } ]\n`,
        },
        {
          path: 'interactions/one-shot/other.mtr',
          content: `agent = { name = "S" agent = @ref("other-agent") }\ntask = "%%message%%"\ninputs.prompts = [ { name = "message" description = "m" required = true } ]\n`,
        },
        ...ordersRepo({ origin: upstream.url }),
      ],
      { egress: createEgressPolicy({ allow: '127.0.0.1/32' }), knownSecrets: ['orders-key', 'other-key'] },
    );
    if (!compiled.ok) throw new Error(JSON.stringify(compiled.diagnostics));
    await deploy(world.db, world.ns, compiled);
    world.script('support', [
      {
        toolCalls: [
          {
            name: 'get-order-other',
            arguments: { additionalInputs: { 'path.orderId': 'R-9', 'query.verbose': null } },
          },
        ],
      },
      { text: 'done' },
    ]);
    const byName = await runToEnd('other', { message: 'Where is R-9?' });
    expect(byName.results).toEqual([
      expect.objectContaining({
        code: 'api:gateway:secret-not-found',
        error: 'Could not find secret other-key for connector orders-get',
      }),
    ]);
    expect([...callsTo('R-8'), ...callsTo('R-9')]).toEqual([]);
  });
});

describe('secrets changing under runs', () => {
  it('a value rotated while a run waits at an approval is the one the approved call sends', async () => {
    const refund = { toolCalls: [{ name: 'refund-order', arguments: { request: { amount: 5, reason: 'late' } } }] };
    world.script('support', [refund, { text: 'refunded' }]);
    const engine = world.engines[0] ?? (await world.engine());
    const started = await engine.startRun(world.ns, 'refund', { inputs: { message: 'refund', orderId: 'P-1' } });
    expect((await waitFor(engine, world.ns, started.id)).status).toBe('PendingApproval');
    await rotateSecret(world.db, world.secretKey, world.ns, ids.orders, 'sk-tool-own-key-v2');
    await engine.answerRunApproval(world.ns, started.id, undefined, { decision: 'approve', by });
    expect((await waitFor(engine, world.ns, started.id)).status).toBe('Completed');
    const refunds = upstream.seen.filter((s) => s.url.startsWith('/orders/P-1/refund'));
    expect(refunds.map((c) => c.headers['x-api-key'])).toEqual(['sk-tool-own-key-v2']);
    await rotateSecret(world.db, world.secretKey, world.ns, ids.orders, 'sk-tool-own-key');
  });

  it('a value rotated between two tool calls of a run: the second call sends the new value', async () => {
    let release!: () => void;
    holds.set('/orders/S-1', new Promise<void>((resolve) => (release = resolve)));
    world.script('support', [getOrder('S-1'), getOrder('S-2'), { text: 'done' }]);
    const engine = world.engines[0] ?? (await world.engine());
    const started = await engine.startRun(world.ns, 'support-any-shop', {
      inputs: { message: 'x', shopKey: ids.alpha },
    });
    while (callsTo('S-1').length === 0) await new Promise((r) => setTimeout(r, 20));
    await rotateSecret(world.db, world.secretKey, world.ns, ids.alpha, 'sk-alpha-shop-key-v2');
    release();
    expect((await waitFor(engine, world.ns, started.id)).status).toBe('Completed');
    expect(callsTo('S-1').map((c) => c.headers['x-api-key'])).toEqual(['sk-alpha-shop-key']);
    expect(callsTo('S-2').map((c) => c.headers['x-api-key'])).toEqual(['sk-alpha-shop-key-v2']);
  });

  it('a secret deleted between two tool calls of a run: the second call says Could not find secret, and nothing is sent', async () => {
    const gamma = await world.secret('gamma-shop', 'sk-gamma-shop-key');
    let release!: () => void;
    holds.set('/orders/G-1', new Promise<void>((resolve) => (release = resolve)));
    world.script('support', [getOrder('G-1'), getOrder('G-2'), { text: 'done' }]);
    const engine = world.engines[0] ?? (await world.engine());
    const started = await engine.startRun(world.ns, 'support-any-shop', { inputs: { message: 'x', shopKey: gamma } });
    while (callsTo('G-1').length === 0) await new Promise((r) => setTimeout(r, 20));
    await deleteSecret(world.db, world.ns, gamma);
    release();
    expect((await waitFor(engine, world.ns, started.id)).status).toBe('Completed');
    const results = (await engine.listEvents(world.ns, started.id))
      .filter((e) => e.type === 'tool-result')
      .map((e) => e.data as { ok: boolean; code: string | null; result: string });
    expect(results.map((r) => r.ok)).toEqual([true, false]);
    expect(results[1]).toMatchObject({ code: 'api:gateway:secret-not-found' });
    expect(JSON.parse(results[1]!.result).error).toBe(`Could not find secret ${gamma} for connector orders-get`);
    expect(callsTo('G-1').map((c) => c.headers['x-api-key'])).toEqual(['sk-gamma-shop-key']);
    expect(callsTo('G-2')).toEqual([]);
  });

  it('a master key rotation in the middle of a run: calls before, during and after send the same value', async () => {
    const newKey = randomBytes(32);
    const ring = createKeyring(newKey, [world.secretKey]);
    // From here on the only engine holds both keys (an engine with the old key alone would take runs too).
    for (const old of world.engines.splice(0)) await old.close();
    const engine = await world.engine({ secretKey: ring });
    let release!: () => void;
    holds.set('/orders/M-1', new Promise<void>((resolve) => (release = resolve)));
    world.script('support', [getOrder('M-1'), getOrder('M-2'), { text: 'done' }]);
    const started = await engine.startRun(world.ns, 'support-any-shop', {
      inputs: { message: 'x', shopKey: ids.beta },
    });
    while (callsTo('M-1').length === 0) await new Promise((r) => setTimeout(r, 20));
    // Half-way: one batch moved (the run's secret among the rows still under the old key, or not).
    await rotateSecretKeys(world.db, ring, {
      batchSize: 1,
      afterBatch: () => Promise.reject(new Error('crash')),
    }).catch(() => undefined);
    release();
    await waitFor(engine, world.ns, started.id, (r) => r.status !== 'Running' || callsTo('M-2').length > 0);
    await rotateSecretKeys(world.db, ring);
    world.script('support', [getOrder('M-3'), { text: 'done' }]);
    const after = await engine.startRun(world.ns, 'support-any-shop', { inputs: { message: 'x', shopKey: ids.beta } });
    await waitFor(engine, world.ns, after.id);
    expect((await waitFor(engine, world.ns, started.id)).status).toBe('Completed');
    for (const id of ['M-1', 'M-2', 'M-3']) {
      expect(callsTo(id).map((c) => c.headers['x-api-key'])).toEqual(['sk-beta-shop-key']);
    }
  });

  it('a tampered secret fails the call loudly with its code, and nothing is sent', async () => {
    const id = await world.secret('tampered-shop', 'sk-tampered-value');
    await world.db.query(
      'UPDATE mt_secrets SET ciphertext = set_byte(ciphertext, 0, get_byte(ciphertext, 0) # 1) WHERE id = $1',
      [id],
    );
    world.script('support', [getOrder('T-1'), { text: 'done' }]);
    const { run, events, results } = await runToEnd('support-any-shop', { message: 'x', shopKey: id });
    expect(run).toMatchObject({ status: 'Failed', error: { code: 'api:secrets:decrypt-failed' } });
    const seen = JSON.stringify({ run, events });
    expect(seen).toContain('api:secrets:decrypt-failed');
    expect(seen).not.toContain('sk-tampered-value');
    expect(results.filter((r) => r.ok === true)).toEqual([]);
    expect(callsTo('T-1')).toEqual([]);
  });
});
