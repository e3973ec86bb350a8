import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Maitento } from '@maitento/sdk';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunsStack, startRunsStack } from './helpers/stack.js';
import { runMt } from './support/harness.js';

// Inbound webhooks (docs/schedules-and-triggers.md): a real `mt serve` takes deliveries signed the Standard Webhooks,
// GitHub and Stripe ways, each starting one run; a bad signature, a stale timestamp and an oversized body are refused
// with their codes and only counted; replays of one delivery start one run and are answered as the first was; a
// payload without a required input is refused with its reason in the trigger's delivery log, not a failed run.
let stack: RunsStack;
let client: pg.Client;
const STANDARD_SECRET = `whsec_${randomBytes(24).toString('base64')}`;
const GITHUB_SECRET = `gh-${randomBytes(16).toString('hex')}`;
const STRIPE_SECRET = `whsec_${randomBytes(16).toString('hex')}`;

const files = [
  { path: 'agents/desk.mtr', content: 'model = "scripted:desk"\ninstructions = "Refund."\n' },
  {
    path: 'interactions/one-shot/refund-desk.mtr',
    content:
      'agent = { name = "Desk" agent = @ref("desk") }\ntask = "Refund %%orderId%% (%%reason%%)"\ninputs.prompts = [\n  { name = "orderId" required = true },\n  { name = "reason" required = true },\n]\n',
  },
  {
    path: 'triggers/shop.mtr',
    content:
      'interaction = @ref("refund-desk")\ninputs = {\n  orderId = { pointer = "/data/order_id" }\n  reason = { pointer = "/data/reason" default = "not given" }\n}\nverify = { style = "stripe" secret = @ref("shop-hook") tolerance = "5m" }\n',
  },
  {
    path: 'triggers/issues.mtr',
    content:
      'interaction = @ref("refund-desk")\ninputs = {\n  orderId = { pointer = "/issue/number" }\n  reason = { pointer = "/issue/title" }\n}\nverify = { style = "github" secret = @ref("github-hook") }\n',
  },
  {
    path: 'triggers/standard.mtr',
    content:
      'interaction = @ref("refund-desk")\ninputs = {\n  orderId = { pointer = "/order" }\n  reason = { pointer = "/reason" default = "standard" }\n}\nverify = { style = "standard-webhooks" secret = @ref("standard-hook") }\nmaxBodyBytes = 2048\n',
  },
];

function post(name: string, body: string, headers: Record<string, string>) {
  return fetch(`${stack.servers[0]!.url}/v1/hooks/default/${name}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  }).then(async (res) => ({ status: res.status, headers: res.headers, body: await res.json() }));
}

const stripeHeader = (body: string, t = Math.floor(Date.now() / 1000), secret = STRIPE_SECRET) =>
  `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${body}`).digest('hex')}`;
const githubHeader = (body: string, secret = GITHUB_SECRET) =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
const standardHeaders = (body: string, id = `msg_${randomUUID()}`, at = new Date()) => ({
  'webhook-id': id,
  'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
  'webhook-signature': new Webhook(STANDARD_SECRET).sign(id, at, body),
});

async function runsOf(): Promise<number> {
  const { rows } = await client.query("SELECT count(*)::int AS n FROM mt_runs WHERE interaction = 'refund-desk'");
  return rows[0].n as number;
}

beforeAll(async () => {
  stack = await startRunsStack({ servers: 1, deploy: false });
  await mkdir(join(stack.home, 'scripted-models'), { recursive: true });
  await writeFile(join(stack.home, 'scripted-models', 'desk.json'), JSON.stringify([{ text: 'Refunded.' }]));
  for (const [name, value] of [
    ['shop-hook', STRIPE_SECRET],
    ['github-hook', GITHUB_SECRET],
    ['standard-hook', STANDARD_SECRET],
  ]) {
    const made = await stack.api.request('POST', '/v1/secrets', { name, value });
    expect(made.status).toBe(201);
  }
  await stack.api.deploy(files);
  client = new pg.Client({ connectionString: stack.db!.url });
  await client.connect();
}, 120_000);

afterAll(async () => {
  await client?.end();
  await stack?.close();
});

describe('inbound webhooks', { timeout: 60_000 }, () => {
  it('starts one run for each valid Standard Webhooks, GitHub and Stripe delivery, with the mapped inputs', async () => {
    const stripeBody = JSON.stringify({ id: 'evt_1', type: 'order.refund_requested', data: { order_id: 'A-1042' } });
    const stripe = await post('shop', stripeBody, { 'stripe-signature': stripeHeader(stripeBody) });
    expect(stripe.status, JSON.stringify(stripe.body)).toBe(202);
    expect(stripe.body).toMatchObject({ eventId: 'evt_1', status: 'started', runId: expect.any(String) });
    const run = await stack.api.getRun(stripe.body.runId);
    expect(run).toMatchObject({ interactive: false, inputs: { orderId: 'A-1042', reason: 'not given' } });
    expect((await stack.api.waitForEnd(stripe.body.runId)).status).toBe('Completed');
    const [started] = await stack.api.events(stripe.body.runId);
    expect(started?.data).toMatchObject({ origin: { kind: 'trigger', name: 'shop', version: 1, eventId: 'evt_1' } });

    const githubBody = JSON.stringify({ action: 'opened', issue: { number: 7, title: 'broken on arrival' } });
    const github = await post('issues', githubBody, {
      'x-hub-signature-256': githubHeader(githubBody),
      'x-github-delivery': randomUUID(),
    });
    expect(github.status, JSON.stringify(github.body)).toBe(202);
    expect((await stack.api.getRun(github.body.runId)).inputs).toEqual({ orderId: '7', reason: 'broken on arrival' });

    const standardBody = JSON.stringify({ order: 'B-7' });
    const standard = await post('standard', standardBody, standardHeaders(standardBody));
    expect(standard.status, JSON.stringify(standard.body)).toBe(202);
    expect((await stack.api.getRun(standard.body.runId)).inputs).toEqual({ orderId: 'B-7', reason: 'standard' });
  });

  it('refuses a bad signature, a stale timestamp and an oversized body with their codes, storing only a count', async () => {
    const before = await runsOf();
    const body = JSON.stringify({ id: 'evt_bad', data: { order_id: 'A-1' } });
    const forged = await post('shop', body, { 'stripe-signature': stripeHeader(body, undefined, 'whsec_wrong') });
    expect([forged.status, forged.body.code]).toEqual([401, 'api:hooks:signature-invalid']);
    const stale = await post('shop', body, {
      'stripe-signature': stripeHeader(body, Math.floor(Date.now() / 1000) - 600),
    });
    expect([stale.status, stale.body.code]).toEqual([401, 'api:hooks:timestamp-stale']);
    const unsigned = await post('issues', JSON.stringify({ issue: { number: 1, title: 't' } }), {});
    expect([unsigned.status, unsigned.body.code]).toEqual([401, 'api:hooks:signature-invalid']);
    const tampered = JSON.stringify({ order: 'B-8' });
    const swapped = await post('standard', tampered, standardHeaders(JSON.stringify({ order: 'B-9' })));
    expect([swapped.status, swapped.body.code]).toEqual([401, 'api:hooks:signature-invalid']);
    const old = await post(
      'standard',
      tampered,
      standardHeaders(tampered, undefined, new Date(Date.now() - 3_600_000)),
    );
    expect([old.status, old.body.code]).toEqual([401, 'api:hooks:timestamp-stale']);
    const big = JSON.stringify({ order: 'B-10', pad: 'x'.repeat(4096) });
    const oversized = await post('standard', big, standardHeaders(big));
    expect([oversized.status, oversized.body.code]).toEqual([413, 'api:hooks:too-large']);
    const unknown = await post('nope', body, {});
    expect([unknown.status, unknown.body.code]).toEqual([404, 'api:hooks:not-found']);

    expect(await runsOf()).toBe(before);
    const { rows } = await client.query(
      "SELECT count(*)::int AS n FROM mt_trigger_deliveries WHERE event_id = 'evt_bad'",
    );
    expect(rows[0].n).toBe(0);
    const log = await stack.api.request('GET', '/v1/triggers/standard/deliveries');
    expect(log.body.rejected).toEqual({ signature: 1, timestamp: 1, size: 1 });
    expect((await stack.api.request('GET', '/v1/triggers/shop/deliveries')).body.rejected).toEqual({
      signature: 1,
      timestamp: 1,
    });
  });

  it('starts one run for 20 replays of one delivery, answering each as the first', async () => {
    const before = await runsOf();
    const body = JSON.stringify({ order: 'C-3' });
    const headers = standardHeaders(body);
    const answers = await Promise.all(Array.from({ length: 20 }, () => post('standard', body, headers)));
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 202));
    expect(new Set(answers.map((a) => a.body.runId)).size).toBe(1);
    expect(answers.filter((a) => a.headers.get('webhook-replayed') === 'true')).toHaveLength(19);
    expect(await runsOf()).toBe(before + 1);
  });

  it("refuses a delivery without a required input, with the reason in the trigger's delivery log and no run", async () => {
    const before = await runsOf();
    const body = JSON.stringify({ id: 'evt_no_order', data: { reason: 'late' } });
    const refused = await post('shop', body, { 'stripe-signature': stripeHeader(body) });
    expect([refused.status, refused.body.code]).toEqual([422, 'api:hooks:inputs-refused']);
    expect(refused.body.error).toContain('orderId');
    const again = await post('shop', body, { 'stripe-signature': stripeHeader(body) });
    expect([again.status, again.body]).toEqual([422, refused.body]);
    expect(await runsOf()).toBe(before);
    const log = await stack.api.request('GET', '/v1/triggers/shop/deliveries');
    expect(log.body.deliveries[0]).toMatchObject({
      eventId: 'evt_no_order',
      status: 'refused',
      runId: null,
      answerStatus: 422,
      detail: expect.stringContaining('orderId'),
    });
    // The same log through the SDK and the CLI.
    const mt = new Maitento({ baseUrl: stack.servers[0]!.url, apiKey: stack.adminKey });
    expect((await mt.triggers.deliveries('shop', { limit: 1 })).deliveries).toEqual([log.body.deliveries[0]]);
    const env = { MT_API_URL: stack.servers[0]!.url, MT_API_KEY: stack.adminKey };
    const shown = await runMt(['trigger-deliveries', 'shop'], { home: stack.home, env });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/evt_no_order\s+1\s+refused\s+422/);
    expect(shown.stdout).toContain('rejected: ');
  });
});
