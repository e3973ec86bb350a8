import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Maitento } from '@maitento/sdk';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from './helpers/api.js';
import { startServe } from './helpers/processes.js';
import { runMt } from './support/harness.js';
import { type RunsStack, startRunsStack } from './helpers/stack.js';

// Outbound webhooks (docs/notifications.md) on the real `mt serve`, PostgreSQL and a receiver on 127.0.0.1 (allowed
// by MT_EGRESS_ALLOW, as the tools' upstream is): every delivery verified with the standardwebhooks package, retries
// with the same webhook-id, the egress rules, a SIGKILLed server's pending deliveries, and a secret rotation's grace.

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  answered: number;
}

/** A receiver: records every request; a path's answer is what its rule says (default 204). */
function startReceiver() {
  const received: Received[] = [];
  // Per path: how many of the next requests to refuse with 503 (Infinity: until told otherwise).
  const failures = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    req.on('end', () => {
      const path = req.url ?? '/';
      const left = failures.get(path) ?? 0;
      const answered = left > 0 ? 503 : 204;
      if (left > 0) failures.set(path, left - 1);
      received.push({ path, headers: req.headers, body, answered });
      res.statusCode = answered;
      res.end();
    });
  });
  return {
    received,
    failures,
    server,
    listen: () =>
      new Promise<string>((resolve) =>
        server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
      ),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const receiver = startReceiver();
let origin: string;
let stack: RunsStack;

beforeAll(async () => {
  origin = await receiver.listen();
  stack = await startRunsStack({
    servers: 1,
    env: {
      // Retries in tenths of a second, capped at one, so the retry tests take seconds; a killed server's lease is short.
      MT_WEBHOOK_RETRY_BASE_MS: '100',
      MT_WEBHOOK_RETRY_MAX_MS: '1000',
      MT_WEBHOOK_MAX_ATTEMPTS: '30',
      MT_WEBHOOK_TIMEOUT_MS: '3000',
    },
  });
}, 90_000);

afterAll(async () => {
  await stack?.close();
  await receiver.close();
});

async function until<T>(what: string, read: () => T | undefined | Promise<T | undefined>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function endpoint(path: string, events: string[] = []): Promise<{ id: string; secret: string }> {
  const made = await stack.api.request('POST', '/v1/webhooks', { url: `${origin}${path}`, events });
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  expect(made.body.secret).toMatch(/^whsec_/);
  // The secret is answered once: never by a read.
  const read = await stack.api.request('GET', `/v1/webhooks/${made.body.endpoint.id}`);
  expect(JSON.stringify(read.body)).not.toContain(made.body.secret);
  return { id: made.body.endpoint.id, secret: made.body.secret };
}

const at = (path: string) => receiver.received.filter((r) => r.path === path);
const payloadOf = (r: Received) =>
  JSON.parse(r.body) as { type: string; timestamp: string; data: Record<string, unknown> };
const verify = (secret: string, r: Received) =>
  new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as { type: string };

describe('outbound webhooks', { timeout: 90_000 }, () => {
  it('sends every event of a refund and a failed run, each signed so that standardwebhooks verifies it', async () => {
    const all = await endpoint('/all');
    const failedOnly = await endpoint('/failed', ['run.failed']);

    const started = await stack.api.startRun('support-desk', {
      message: 'The lamp of order A-7001 arrived broken, please refund it.',
    });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const run = started.body;
    const waiting = await stack.api.waitForRun(run.id, (r) => r.status !== 'Running');
    expect(waiting.status).toBe('PendingApproval');
    const approved = await stack.api.request('POST', `/v1/runs/${run.id}/approve`, {});
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    expect((await stack.api.waitForEnd(run.id)).status).toBe('Completed');
    const failing = await stack.api.startRun('support-desk', { message: 'Where is my order A-7002? [fail:500]' });
    expect((await stack.api.waitForEnd(failing.body.id, 60_000)).status).toBe('Failed');

    const forRun = (id: string) => at('/all').filter((r) => JSON.stringify(payloadOf(r).data).includes(id));
    await until('the refund run and the failed run delivered', () =>
      forRun(run.id).some((r) => payloadOf(r).type === 'run.completed') &&
      forRun(failing.body.id).some((r) => payloadOf(r).type === 'run.failed')
        ? true
        : undefined,
    );
    // The run waited once (for the approval) and completed; the approval was requested and answered.
    expect(
      forRun(run.id)
        .map((r) => payloadOf(r).type)
        .sort(),
    ).toEqual(['approval.answered', 'approval.requested', 'run.completed', 'run.waiting']);
    for (const r of at('/all')) {
      expect(verify(all.secret, r)).toMatchObject({ type: payloadOf(r).type });
      expect(r.headers['webhook-id']).toMatch(/^msg_[0-9a-f]{32}$/);
      expect(r.headers['content-type']).toBe('application/json');
    }
    const answered = forRun(run.id).find((r) => payloadOf(r).type === 'approval.answered')!;
    expect(payloadOf(answered).data).toMatchObject({ runId: run.id, status: 'Approved', functionName: 'refund-order' });
    // The endpoint that asked for run.failed only got that.
    await until('run.failed at /failed', () => (at('/failed').length > 0 ? true : undefined));
    expect(at('/failed').map((r) => payloadOf(r).type)).toEqual(['run.failed']);
    expect(verify(failedOnly.secret, at('/failed')[0]!)).toMatchObject({ data: { runId: failing.body.id } });
    // Another endpoint's secret does not verify it.
    expect(() => verify(all.secret, at('/failed')[0]!)).toThrow();

    const log = await until('every outcome stored', async () => {
      const answer = await stack.api.request('GET', `/v1/webhooks/${all.id}/deliveries?limit=100`);
      expect(answer.status).toBe(200);
      return answer.body.every((d: { status: string }) => d.status !== 'Pending') ? answer : undefined;
    });
    expect(log.body.length).toBe(at('/all').length);
    for (const delivery of log.body) {
      expect(delivery).toMatchObject({ status: 'Delivered', attempts: 1, lastStatus: 204, lastError: null });
    }
  });

  it('retries a receiver that fails 3 times, with the same webhook-id, until it answers', async () => {
    const flaky = await endpoint('/flaky');
    receiver.failures.set('/flaky', 3);
    const sent = await stack.api.request('POST', `/v1/webhooks/${flaky.id}/test`);
    expect(sent.status, JSON.stringify(sent.body)).toBe(202);
    expect(sent.body).toMatchObject({ eventType: 'webhook.test', status: 'Pending' });
    await until('the fourth attempt', () => (at('/flaky').length >= 4 ? true : undefined));
    const attempts = at('/flaky');
    expect(attempts.map((r) => r.answered)).toEqual([503, 503, 503, 204]);
    expect(new Set(attempts.map((r) => r.headers['webhook-id']))).toEqual(new Set([sent.body.messageId]));
    for (const r of attempts) expect(verify(flaky.secret, r)).toMatchObject({ type: 'webhook.test' });
    const log = await until('the delivery logged as delivered', async () => {
      const answer = await stack.api.request('GET', `/v1/webhooks/${flaky.id}/deliveries`);
      return answer.body[0]?.status === 'Delivered' ? answer.body : undefined;
    });
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({ id: sent.body.id, attempts: 4, lastStatus: 204, lastError: null });
  });

  it('refuses a receiver on a private address unless MT_EGRESS_ALLOW lets it through, and only lets an admin manage endpoints', async () => {
    // 127.0.0.2 is loopback too, but only 127.0.0.1 is allowed here; 10/8 is private.
    for (const url of ['http://127.0.0.2:9/hook', 'http://10.20.30.40/hook', 'http://169.254.169.254/latest']) {
      const refused = await stack.api.request('POST', '/v1/webhooks', { url });
      expect(refused.status, JSON.stringify(refused.body)).toBe(422);
      expect(refused.body.code).toBe('api:webhooks:url-refused');
    }
    const ok = await endpoint('/allowed');
    const moved = await stack.api.request('PUT', `/v1/webhooks/${ok.id}`, { url: 'http://192.168.1.1/' });
    expect(moved.status).toBe(422);
    expect(moved.body.code).toBe('api:webhooks:url-refused');

    const runner = await stack.api.request('POST', '/v1/keys', { name: 'hooks-runner', role: 'runner' });
    expect(runner.status).toBe(201);
    const asRunner = api(stack.servers[0]!.url, runner.body.key);
    expect((await asRunner.request('POST', '/v1/webhooks', { url: `${origin}/x` })).status).toBe(403);
    expect((await asRunner.request('GET', '/v1/webhooks')).status).toBe(403);
    expect((await asRunner.request('POST', `/v1/webhooks/${ok.id}/test`)).status).toBe(403);
  });

  it("delivers a SIGKILLed server's pending deliveries after a restart, with the same webhook-id", async () => {
    const down = await endpoint('/down');
    receiver.failures.set('/down', Number.POSITIVE_INFINITY);
    const sent = [];
    for (let i = 0; i < 3; i++) {
      const answer = await stack.api.request('POST', `/v1/webhooks/${down.id}/test`);
      expect(answer.status).toBe(202);
      sent.push(answer.body.messageId as string);
    }
    await until('each tried once', () =>
      sent.every((id) => at('/down').some((r) => r.headers['webhook-id'] === id)) ? true : undefined,
    );
    const server = stack.servers[0]!;
    await server.kill();
    stack.servers.splice(0, 1);
    receiver.failures.set('/down', 0);
    const restarted = await startServe(stack.home, stack.env);
    stack.servers.push(restarted);
    stack.api = api(restarted.url, stack.adminKey);
    await until('every pending delivery delivered after the restart', () =>
      sent.every((id) => at('/down').some((r) => r.headers['webhook-id'] === id && r.answered === 204))
        ? true
        : undefined,
    );
    for (const r of at('/down')) expect(verify(down.secret, r)).toMatchObject({ type: 'webhook.test' });
    // The log says Delivered once the outcome is stored, just after the receiver answered.
    const log = await until('the log to say Delivered', async () => {
      const answer = await stack.api.request('GET', `/v1/webhooks/${down.id}/deliveries`);
      return answer.body.every((d: { status: string }) => d.status === 'Delivered') ? answer.body : undefined;
    });
    expect(log.map((d: { messageId: string }) => d.messageId).sort()).toEqual([...sent].sort());
  });

  it('signs with the old and the new secret during a rotation grace, with the new one alone after', async () => {
    const rotating = await endpoint('/rotating');
    const rotated = await stack.api.request('POST', `/v1/webhooks/${rotating.id}/rotate-secret`, {
      graceSeconds: 3600,
    });
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    const fresh = rotated.body.secret as string;
    expect(fresh).not.toBe(rotating.secret);
    expect(rotated.body.endpoint.previousSecretUntil).not.toBeNull();
    await stack.api.request('POST', `/v1/webhooks/${rotating.id}/test`);
    const [during] = await until('the test during the grace', () =>
      at('/rotating').length === 1 ? at('/rotating') : undefined,
    );
    expect(String(during!.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verify(rotating.secret, during!)).toMatchObject({ type: 'webhook.test' });
    expect(verify(fresh, during!)).toMatchObject({ type: 'webhook.test' });

    const ended = await stack.api.request('POST', `/v1/webhooks/${rotating.id}/rotate-secret`, { graceSeconds: 0 });
    expect(ended.status).toBe(200);
    const last = ended.body.secret as string;
    await stack.api.request('POST', `/v1/webhooks/${rotating.id}/test`);
    const after = await until('the test after the grace', () => at('/rotating')[1]);
    expect(verify(last, after)).toMatchObject({ type: 'webhook.test' });
    expect(() => verify(fresh, after)).toThrow();
    expect(() => verify(rotating.secret, after)).toThrow();
  });

  it('manages an endpoint with the mt webhook-* commands and the TypeScript SDK', async () => {
    const env = { MT_API_URL: stack.api.url, MT_API_KEY: stack.adminKey };
    const mt = (...args: string[]) => runMt(args, { home: stack.home, env });
    const created = await mt(
      'webhook-create',
      `${origin}/cli`,
      '--event',
      'run.failed',
      '--event',
      'approval.requested',
    );
    expect(created.code, created.stderr).toBe(0);
    const secret = created.stdout.trim();
    expect(secret).toMatch(/^whsec_/);
    const listed = await mt('webhook-list', '--json');
    expect(listed.code, listed.stderr).toBe(0);
    const mine = JSON.parse(listed.stdout).find((e: { url: string }) => e.url === `${origin}/cli`);
    expect(mine).toMatchObject({ events: ['run.failed', 'approval.requested'], enabled: true });
    expect(listed.stdout).not.toContain(secret);
    const table = await mt('webhook-list');
    expect(table.stdout).toContain(`${origin}/cli`);

    const tested = await mt('webhook-test', mine.id, '--json');
    expect(tested.code, tested.stderr).toBe(0);
    const delivery = JSON.parse(tested.stdout);
    const got = await until('the CLI test event', () => at('/cli')[0]);
    expect(got.headers['webhook-id']).toBe(delivery.messageId);
    expect(verify(secret, got)).toMatchObject({ type: 'webhook.test' });
    const log = await until('the delivery logged', async () => {
      const shown = await mt('webhook-deliveries', mine.id, '--status', 'Delivered', '--json');
      const rows = JSON.parse(shown.stdout);
      return rows.length === 1 ? rows : undefined;
    });
    expect(log[0]).toMatchObject({ messageId: delivery.messageId, attempts: 1 });
    const shownLog = await mt('webhook-deliveries', mine.id);
    expect(shownLog.stdout).toContain(delivery.messageId);

    const rotated = await mt('webhook-rotate', mine.id, '--grace', '0');
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(rotated.stdout.trim()).toMatch(/^whsec_/);
    expect(rotated.stdout.trim()).not.toBe(secret);

    // The SDK: the same endpoint, changed, tested and deleted.
    const sdk = new Maitento({ baseUrl: stack.api.url, apiKey: stack.adminKey });
    const changed = await sdk.webhooks.update(mine.id, { enabled: false, description: 'paused' });
    expect(changed).toMatchObject({ enabled: false, description: 'paused' });
    expect(await sdk.webhooks.get(mine.id)).toMatchObject({ enabled: false });
    const again = await sdk.webhooks.rotateSecret(mine.id, { graceSeconds: 60 });
    expect(again.endpoint.previousSecretUntil).not.toBeNull();
    const test = await sdk.webhooks.test(mine.id);
    expect(test).toMatchObject({ eventType: 'webhook.test', status: 'Pending' });
    const second = await until('the SDK test event', () => at('/cli')[1]);
    expect(second.headers['webhook-id']).toBe(test.messageId);
    expect(verify(again.secret, second)).toMatchObject({ type: 'webhook.test' });
    expect((await sdk.webhooks.deliveries(mine.id, { limit: 10 })).map((d) => d.id)).toContain(test.id);
    const gone = await mt('webhook-delete', mine.id);
    expect(gone.code, gone.stderr).toBe(0);
    expect((await sdk.webhooks.list()).map((e) => e.id)).not.toContain(mine.id);

    // Each change is in the audit log, by the admin key, never with a secret.
    const audit = await stack.api.request('GET', `/v1/audit?action=webhook&target=webhook:${mine.id}`);
    expect(audit.status).toBe(200);
    const actions = audit.body.entries.map((e: { action: string }) => e.action).sort();
    expect(actions).toEqual([
      'webhook.created',
      'webhook.deleted',
      'webhook.secret-rotated',
      'webhook.secret-rotated',
      'webhook.updated',
    ]);
    expect(JSON.stringify(audit.body)).not.toContain('whsec_');
  });
});
