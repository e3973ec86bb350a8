import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createEgressPolicy, pinnedResolver } from '@maitento/egress';
import {
  createNamespace,
  createPgliteDb,
  createWebhookEndpoint,
  type Db,
  enqueueWebhookTest,
  listWebhookDeliveries,
  migrate,
  openWakeups,
  type Wakeups,
} from '@maitento/store';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWebhookDelivery } from '../src/notifications/delivery.js';
import { webhookSettingsFromEnv } from '../src/server/settings.js';

// The delivery loop's egress: every connection goes through the egress agent with the process's policy and resolver,
// so a name that resolves to an address the rules refuse is refused at delivery (the URL's static check at the API
// passed it), and the same name is delivered to once MT_EGRESS_ALLOW lets its address through.
const NS = 'hooks';
const KEY = randomBytes(32);
let db: Db;
let wakeups: Wakeups;
let receiver: Server;
let port: number;
const received: { headers: Record<string, string>; body: string }[] = [];

beforeAll(async () => {
  db = await createPgliteDb();
  await migrate(db);
  await createNamespace(db, NS);
  wakeups = await openWakeups(db);
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    req.on('end', () => {
      received.push({ headers: req.headers as Record<string, string>, body });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  port = (receiver.address() as AddressInfo).port;
});

afterAll(async () => {
  await wakeups?.close();
  await db?.close();
  await new Promise((resolve) => receiver?.close(resolve));
});

async function settled(id: string, endpoint: string) {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const [delivery] = (await listWebhookDeliveries(db, NS, endpoint, { limit: 10 })).filter((d) => d.id === id);
    if (delivery !== undefined && delivery.status !== 'Pending') return delivery;
    if (Date.now() > deadline) throw new Error(`delivery ${id} still pending: ${JSON.stringify(delivery)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('the webhook delivery loop', () => {
  it('refuses a name that resolves to a loopback address unless MT_EGRESS_ALLOW allows it', async () => {
    // receiver.test resolves to the receiver's 127.0.0.1, as a name an attacker points at an internal host would.
    const resolver = pinnedResolver('receiver.test', [{ address: '127.0.0.1', family: 4 }]);
    const { endpoint, secret } = await createWebhookEndpoint(db, KEY, NS, {
      url: `http://receiver.test:${port}/hook`,
      events: [],
    });
    const settings = webhookSettingsFromEnv({ maxAttempts: 1, retryBaseMs: 10, timeoutMs: 2000 });

    const strict = startWebhookDelivery({
      db,
      secretKey: KEY,
      wakeups,
      policy: createEgressPolicy(),
      resolver,
      settings,
    });
    const refused = await enqueueWebhookTest(db, NS, endpoint.id);
    const failed = await settled(refused.id, endpoint.id);
    await strict.close();
    expect(failed).toMatchObject({ status: 'Failed', attempts: 1, lastStatus: null });
    expect(failed.lastError).toContain('api:connectors:address-blocked');
    expect(received).toHaveLength(0);

    const allowing = startWebhookDelivery({
      db,
      secretKey: KEY,
      wakeups,
      policy: createEgressPolicy({ allow: '127.0.0.1' }),
      resolver,
      settings,
    });
    const allowed = await enqueueWebhookTest(db, NS, endpoint.id);
    const delivered = await settled(allowed.id, endpoint.id);
    await allowing.close();
    expect(delivered).toMatchObject({ status: 'Delivered', attempts: 1, lastStatus: 204 });
    expect(received).toHaveLength(1);
    expect(received[0]!.headers['webhook-id']).toBe(allowed.messageId);
    expect(new Webhook(secret).verify(received[0]!.body, received[0]!.headers)).toMatchObject({ type: 'webhook.test' });
  });

  it('a loop that closes aborts the send in flight and leaves the delivery due again at once (even its last attempt), for another process', async () => {
    // A receiver that never answers.
    let arrived = 0;
    const silent = createServer(() => {
      arrived++;
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const { endpoint } = await createWebhookEndpoint(db, KEY, NS, {
        url: `http://127.0.0.1:${(silent.address() as AddressInfo).port}/hook`,
        events: [],
      });
      const loop = startWebhookDelivery({
        db,
        secretKey: KEY,
        wakeups,
        policy: createEgressPolicy({ allow: '127.0.0.1' }),
        settings: webhookSettingsFromEnv({ timeoutMs: 60_000, maxAttempts: 1 }),
      });
      const sent = await enqueueWebhookTest(db, NS, endpoint.id);
      for (let waited = 0; arrived === 0 && waited < 300; waited++) await new Promise((r) => setTimeout(r, 50));
      expect(arrived).toBe(1);
      await loop.close();
      const [delivery] = await listWebhookDeliveries(db, NS, endpoint.id, { limit: 1 });
      expect(delivery).toMatchObject({
        id: sent.id,
        status: 'Pending',
        attempts: 1,
        lastError: 'the sending process stopped',
      });
      const { rows } = await db.query<{ due: boolean; held: boolean }>(
        'SELECT next_attempt_at <= now() AS due, claimed_until IS NOT NULL AS held FROM mt_webhook_deliveries WHERE id = $1',
        [sent.id],
      );
      expect(rows[0]).toEqual({ due: true, held: false });
    } finally {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});
