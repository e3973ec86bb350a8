import { randomBytes, randomUUID } from 'node:crypto';
import {
  answerApprovalRecord,
  appendRunEvents,
  claimWebhookDeliveries,
  createConnectLink,
  createKeyring,
  createNamespace,
  createWebhookEndpoint,
  type Db,
  deleteWebhookEndpoint,
  enqueueWebhookTest,
  expireApprovals,
  finishWebhookDelivery,
  insertApproval,
  insertRun,
  listWebhookDeliveries,
  migrate,
  nextWebhookDue,
  pruneBefore,
  rotateSecretKeys,
  rotateWebhookSecret,
  updateWebhookEndpoint,
  webhookMessageId,
} from '@maitento/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bothBackends } from './backends.js';

// The webhooks' outbox in the store: a delivery is written in the statement of the change that causes its event, for
// each endpoint of the namespace that wants it, and taken, retried and finished by the delivery loop's statements.
const NS = 'hooks-a';
const OTHER = 'hooks-b';
const KEY = randomBytes(32);

const backends = bothBackends('mt_store_webhooks');

async function newRun(db: Db, namespace = NS): Promise<string> {
  const id = randomUUID();
  await insertRun(
    db,
    {
      id,
      namespace,
      interaction: 'support',
      interactionVersion: 1,
      versions: [{ kind: 'interaction', name: 'support', version: 1 }],
      inputs: {},
      interactive: false,
    },
    { type: 'run-started', data: {} },
  );
  return id;
}

describe.each(backends)('webhook deliveries on %s', (_name, open) => {
  let db: Db;
  let done: () => Promise<void>;
  let all: string;
  let approvalsOnly: string;

  beforeAll(async () => {
    ({ db, done } = await open());
    await migrate(db);
    await createNamespace(db, NS);
    await createNamespace(db, OTHER);
    all = (await createWebhookEndpoint(db, KEY, NS, { url: 'https://hooks.example.com/all', events: [] })).endpoint.id;
    approvalsOnly = (
      await createWebhookEndpoint(db, KEY, NS, {
        url: 'https://hooks.example.com/approvals',
        events: ['approval.requested', 'approval.expired'],
      })
    ).endpoint.id;
    // Another namespace's endpoint never gets this namespace's events.
    await createWebhookEndpoint(db, KEY, OTHER, { url: 'https://hooks.example.com/other', events: [] });
  });
  afterAll(async () => {
    await done?.();
  });

  const types = async (endpoint: string) =>
    (await listWebhookDeliveries(db, NS, endpoint, { limit: 100 })).map((d) => d.eventType).sort();

  it('writes run and approval events with the change, per endpoint filter, and none when the change wrote nothing', async () => {
    const run = await newRun(db);
    const approval = await insertApproval(db, {
      id: randomUUID(),
      namespace: NS,
      runId: run,
      toolCallId: 'c1',
      step: 1,
      functionName: 'refund-order',
      argumentsJson: '{}',
      requestHash: 'h',
    });
    await db.transaction((tx) =>
      appendRunEvents(tx, run, { statuses: ['Running'] }, [{ type: 'run-waiting', data: {} }], {
        status: 'PendingApproval',
      }),
    );
    // A fenced append that does not hold writes no event.
    const refused = await db.transaction((tx) =>
      appendRunEvents(tx, run, { statuses: ['Running'] }, [{ type: 'run-failed', data: {} }], {
        status: 'Failed',
        error: { code: 'x', message: 'y' },
      }),
    );
    expect(refused).toBe(false);
    // A step without a status change is no event.
    await db.transaction((tx) =>
      appendRunEvents(tx, run, { statuses: ['PendingApproval'] }, [{ type: 'model-response', data: {} }]),
    );
    const answered = await answerApprovalRecord(db, NS, approval.id, {
      status: 'Approved',
      reason: null,
      keyId: 'k1',
      keyName: 'alice',
    });
    expect(answered?.status).toBe('Approved');
    await db.transaction((tx) =>
      appendRunEvents(tx, run, { statuses: ['PendingApproval'] }, [{ type: 'run-completed', data: {} }], {
        status: 'Completed',
        result: 'done',
      }),
    );
    const expiring = await insertApproval(db, {
      id: randomUUID(),
      namespace: NS,
      runId: null,
      toolCallId: 'c2',
      functionName: 'refund-order',
      argumentsJson: '{}',
      requestHash: 'h',
    });
    await expireApprovals(db, { id: expiring.id });
    // A connect link is the OAuth flow's pending authorisation.
    await createConnectLink(db, KEY, NS, {
      provider: 'github',
      providerVersion: 1,
      endUser: 'user-42',
      scopes: ['repo'],
      redirectUri: 'https://mt.example/v1/connections/callback',
      state: 'state-hooks',
      codeVerifier: 'verifier-hooks',
      createdBy: null,
      expiresAt: new Date(Date.now() + 60_000),
    });

    expect(await types(all)).toEqual([
      'approval.answered',
      'approval.expired',
      'approval.requested',
      'approval.requested',
      'authorization.requested',
      'run.completed',
      'run.waiting',
    ]);
    expect(await types(approvalsOnly)).toEqual(['approval.expired', 'approval.requested', 'approval.requested']);
    const { rows } = await db.query<{ payload: string }>(
      "SELECT payload FROM mt_webhook_deliveries WHERE endpoint_id = $1 AND event_type = 'approval.answered'",
      [all],
    );
    const payload = JSON.parse(rows[0]!.payload);
    expect(payload).toMatchObject({
      type: 'approval.answered',
      data: { approvalId: approval.id, runId: run, status: 'Approved', answeredBy: { keyId: 'k1', keyName: 'alice' } },
    });
    expect(new Date(payload.timestamp).toISOString()).toBe(payload.timestamp);
    const { rows: links } = await db.query<{ payload: string }>(
      "SELECT payload FROM mt_webhook_deliveries WHERE endpoint_id = $1 AND event_type = 'authorization.requested'",
      [all],
    );
    const link = JSON.parse(links[0]!.payload);
    expect(link.data).toMatchObject({ provider: 'github', endUser: 'user-42', scopes: ['repo'] });
    // Never the link's state or PKCE verifier.
    expect(links[0]!.payload).not.toMatch(/state-hooks|verifier-hooks/);
  });

  it('takes a due delivery once, retries a failure after its backoff, fails it after the last attempt', async () => {
    // Only this test's endpoint is enabled: the others' rows stay where they are.
    await updateWebhookEndpoint(db, NS, all, { enabled: false });
    await updateWebhookEndpoint(db, NS, approvalsOnly, { enabled: false });
    const { endpoint, secret } = await createWebhookEndpoint(db, KEY, OTHER, {
      url: 'https://hooks.example.com/t',
      events: ['run.failed'],
    });
    await db.query('UPDATE mt_webhook_endpoints SET enabled = false WHERE namespace = $1 AND id <> $2', [
      OTHER,
      endpoint.id,
    ]);
    const test = await enqueueWebhookTest(db, OTHER, endpoint.id);
    const [first, again] = await Promise.all([
      claimWebhookDeliveries(db, KEY, 10, 60_000),
      claimWebhookDeliveries(db, KEY, 10, 60_000),
    ]);
    const taken = [...first, ...again];
    expect(taken.map((d) => d.id)).toEqual([test.id]);
    expect(taken[0]).toMatchObject({ url: 'https://hooks.example.com/t', attempts: 1, secrets: [secret] });
    expect(taken[0]!.messageId).toBe(webhookMessageId(test.id));
    // Held: not taken again while its lease lasts.
    expect(await claimWebhookDeliveries(db, KEY, 10, 60_000)).toEqual([]);
    await finishWebhookDelivery(db, test.id, { ok: false, status: 500, error: 'HTTP 500', retryMs: 0, maxAttempts: 2 });
    const retry = await claimWebhookDeliveries(db, KEY, 10, 60_000);
    expect(retry.map((d) => [d.id, d.attempts])).toEqual([[test.id, 2]]);
    await finishWebhookDelivery(db, test.id, { ok: false, error: 'refused', retryMs: 0, maxAttempts: 2 });
    const [failed] = await listWebhookDeliveries(db, OTHER, endpoint.id, { limit: 10 });
    expect(failed).toMatchObject({ status: 'Failed', attempts: 2, lastError: 'refused', nextAttemptAt: null });
    expect(await nextWebhookDue(db)).toBeUndefined();

    const ok = await enqueueWebhookTest(db, OTHER, endpoint.id);
    expect(await nextWebhookDue(db)).toBe(0);
    await claimWebhookDeliveries(db, KEY, 10, 60_000);
    await finishWebhookDelivery(db, ok.id, { ok: true, status: 204, retryMs: 0, maxAttempts: 2 });
    const [delivered] = await listWebhookDeliveries(db, OTHER, endpoint.id, { limit: 1 });
    expect(delivered).toMatchObject({ id: ok.id, status: 'Delivered', attempts: 1, lastStatus: 204 });
  });

  it('signs with both secrets during a rotation grace, with the new one alone after it', async () => {
    const { endpoint, secret: old } = await createWebhookEndpoint(db, KEY, OTHER, {
      url: 'https://hooks.example.com/r',
      events: [],
    });
    const rotated = await rotateWebhookSecret(db, KEY, OTHER, endpoint.id, 3600);
    expect(rotated.secret).not.toBe(old);
    expect(rotated.endpoint.previousSecretUntil).not.toBeNull();
    const test = await enqueueWebhookTest(db, OTHER, endpoint.id);
    const taken = await claimWebhookDeliveries(db, KEY, 10, 60_000);
    expect(taken.find((d) => d.id === test.id)?.secrets).toEqual([rotated.secret, old]);
    const now = await rotateWebhookSecret(db, KEY, OTHER, endpoint.id, 0);
    expect(now.endpoint.previousSecretUntil).toBeNull();
    const next = await enqueueWebhookTest(db, OTHER, endpoint.id);
    const alone = await claimWebhookDeliveries(db, KEY, 10, 60_000);
    expect(alone.find((d) => d.id === next.id)?.secrets).toEqual([now.secret]);
    await deleteWebhookEndpoint(db, OTHER, endpoint.id);
    await expect(listWebhookDeliveries(db, OTHER, endpoint.id, { limit: 1 })).rejects.toMatchObject({
      code: 'api:webhooks:not-found',
    });
  });

  it("re-wraps the endpoints' secrets in a master key rotation, which still sign after it", async () => {
    const { endpoint, secret } = await createWebhookEndpoint(db, KEY, OTHER, {
      url: 'https://hooks.example.com/k',
      events: [],
    });
    const keys = createKeyring(randomBytes(32), [KEY]);
    const rotation = await rotateSecretKeys(db, keys);
    expect(rotation.rewrapped).toBeGreaterThan(0);
    const { rows } = await db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM mt_webhook_endpoints WHERE key_id <> $1',
      [keys.current.id],
    );
    expect(rows[0]!.n).toBe(0);
    const test = await enqueueWebhookTest(db, OTHER, endpoint.id);
    // Only the new key is needed now.
    const taken = await claimWebhookDeliveries(db, createKeyring(keys.current.key), 50, 60_000);
    expect(taken.find((d) => d.id === test.id)?.secrets).toEqual([secret]);
  });

  it('lets the retention delete ended deliveries made before its cutoff, never a pending one', async () => {
    const { endpoint } = await createWebhookEndpoint(db, KEY, OTHER, {
      url: 'https://hooks.example.com/p',
      events: [],
    });
    const ended = await enqueueWebhookTest(db, OTHER, endpoint.id);
    await db.query("UPDATE mt_webhook_deliveries SET status = 'Delivered' WHERE id = $1", [ended.id]);
    const pending = await enqueueWebhookTest(db, OTHER, endpoint.id);
    const pruned = await pruneBefore(db, new Date(Date.now() + 60_000));
    expect(pruned.webhookDeliveries).toBeGreaterThanOrEqual(1);
    const left = await listWebhookDeliveries(db, OTHER, endpoint.id, { limit: 10 });
    expect(left.map((d) => d.id)).toEqual([pending.id]);
  });
});
