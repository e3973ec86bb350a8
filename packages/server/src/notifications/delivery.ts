import { createEgressAgent, type EgressPolicy, type Resolver } from '@maitento/egress';
import { isMtError } from '@maitento/errors';
import {
  type ClaimedDelivery,
  claimWebhookDeliveries,
  type Db,
  FALLBACK_POLL_MS,
  finishWebhookDelivery,
  nextWebhookDue,
  type SecretKeys,
  WEBHOOK_MAX_WAIT_MS,
  type Wakeups,
  wakeTopics,
} from '@maitento/store';
import { Webhook } from 'standardwebhooks';
import { request } from 'undici';
import type { WebhookSettings } from '../server/settings.js';

/** Where the delivery loop says that it could not reach its database (it tries again at its fallback). */
export interface WebhookDeliveryLogger {
  warn(obj: object, msg: string): void;
}

/** A running delivery loop. */
export interface WebhookDeliveryLoop {
  /** Looks for due deliveries now. */
  wake(): void;
  /** Stops taking deliveries, aborts the ones being sent (each due again at once) and waits for their records. */
  close(): Promise<void>;
}

/** The `webhook-signature` header: one `v1,<base64>` per secret, separated by spaces (Standard Webhooks). */
export function signatures(secrets: string[], messageId: string, at: Date, payload: string): string {
  return secrets.map((secret) => new Webhook(secret).sign(messageId, at, payload)).join(' ');
}

// The reason of a failed attempt: an egress refusal by its code (api:connectors:address-blocked, ...), a network
// error by its code; never a header or a secret.
function reasonOf(error: unknown): string {
  let current = error;
  for (let depth = 0; depth < 5 && current !== undefined && current !== null; depth++) {
    if (isMtError(current)) return `${current.code}: ${current.message}`;
    current = (current as { cause?: unknown }).cause;
  }
  const code = (error as { code?: unknown })?.code;
  const message = error instanceof Error ? error.message : String(error);
  return (typeof code === 'string' ? `${code} ${message}` : message).slice(0, 500);
}

/** The wait before attempt `attempts + 1`: `retryBaseMs` doubled per failed attempt, at most `retryMaxMs`. */
export function retryDelayMs(settings: WebhookSettings, attempts: number): number {
  return Math.min(settings.retryBaseMs * 2 ** Math.max(0, attempts - 1), settings.retryMaxMs);
}

/**
 * The outbound webhooks' delivery loop (docs/notifications.md), one per `mt serve` and `mt worker` process: takes due
 * deliveries (a short statement with FOR UPDATE SKIP LOCKED, so processes share them and never send one twice at
 * once), sends each signed (Standard Webhooks) through an egress agent (the address rules of the tools' calls), at most
 * `concurrency` at a time, each within `timeoutMs`, and records the outcome: Delivered, a retry after its backoff, or
 * Failed after `maxAttempts`. It is woken by `webhooks` (a delivery was written, by any process) and when a retry or a
 * stopped process's lease is due (read in its one statement); every 2 s only while wake-ups are not listening. Its
 * statements go one at a time through the pool (never the wake-up connection), and no transaction is held while a
 * delivery is sent, so a slow receiver holds neither a connection nor a run.
 */
export function startWebhookDelivery(options: {
  db: Db;
  secretKey: SecretKeys;
  wakeups: Pick<Wakeups, 'on' | 'listening'> & Partial<Pick<Wakeups, 'onConnect'>>;
  policy: EgressPolicy;
  resolver?: Resolver;
  settings: WebhookSettings;
  logger?: WebhookDeliveryLogger;
}): WebhookDeliveryLoop {
  const { db, settings } = options;
  const agent = createEgressAgent({
    policy: options.policy,
    ...(options.resolver ? { resolver: options.resolver } : {}),
    connect: { timeout: settings.timeoutMs },
    connections: settings.concurrency,
  });
  // A taken delivery is held for its attempt's deadline and a margin; a process stopped meanwhile leaves it to others.
  const leaseMs = settings.timeoutMs + 5000;
  let closed = false;
  // Aborts the sends in flight when the loop closes: each is recorded as a failed attempt, due again at once, so
  // another process sends it without waiting for its lease (and a stopping process is not held by a slow receiver).
  const stopping = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let looking = false;
  let again = false;
  let failing = false;
  const sending = new Set<Promise<void>>();
  // The loop's statements, one at a time: it never holds more than one pooled connection.
  let chain: Promise<unknown> = Promise.resolve();
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const run = chain.then(work, work);
    chain = run.catch(() => undefined);
    return run;
  };

  function arm(ms: number): void {
    if (closed) return;
    if (timer !== undefined) clearTimeout(timer);
    timer = setTimeout(wake, Math.max(0, ms));
    timer.unref();
  }

  async function send(delivery: ClaimedDelivery): Promise<void> {
    const at = new Date();
    let outcome: { ok: boolean; status?: number; error?: string };
    try {
      const answer = await request(delivery.url, {
        method: 'POST',
        dispatcher: agent,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Maitento-Webhooks/1',
          'webhook-id': delivery.messageId,
          'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
          'webhook-signature': signatures(delivery.secrets, delivery.messageId, at, delivery.payload),
        },
        body: delivery.payload,
        signal: AbortSignal.any([AbortSignal.timeout(settings.timeoutMs), stopping.signal]),
      });
      // The answer's body is not read beyond what arrives: only its status counts.
      await answer.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
      const ok = answer.statusCode >= 200 && answer.statusCode < 300;
      outcome = ok
        ? { ok, status: answer.statusCode }
        : { ok, status: answer.statusCode, error: `the receiver answered HTTP ${answer.statusCode}` };
    } catch (error) {
      outcome = { ok: false, error: stopping.signal.aborted ? 'the sending process stopped' : reasonOf(error) };
    }
    // An attempt cut short by the process stopping is due again at once and never the last one.
    const stopped = stopping.signal.aborted;
    await serial(() =>
      finishWebhookDelivery(db, delivery.id, {
        ...outcome,
        retryMs: stopped ? 0 : retryDelayMs(settings, delivery.attempts),
        maxAttempts: stopped ? 2 ** 31 - 1 : settings.maxAttempts,
      }),
    ).catch((error) =>
      options.logger?.warn({ err: error, delivery: delivery.id }, 'webhooks: an outcome was not stored'),
    );
  }

  async function look(): Promise<void> {
    while (!closed) {
      const free = settings.concurrency - sending.size;
      if (free <= 0) return;
      const taken = await serial(() => claimWebhookDeliveries(db, options.secretKey, free, leaseMs));
      for (const delivery of taken) {
        const sent: Promise<void> = send(delivery).finally(() => {
          sending.delete(sent);
          // A slot is free: look again (more may be due).
          wake();
        });
        sending.add(sent);
      }
      if (taken.length < free) break;
    }
    if (closed || sending.size > 0) return;
    // Nothing to take now: wait for a wake-up, the next due retry or lease, or the fallback.
    const dueInMs = await serial(() => nextWebhookDue(db));
    const fallback = options.wakeups.listening ? WEBHOOK_MAX_WAIT_MS : FALLBACK_POLL_MS;
    // By the database's clock; at least 50 ms, so a row another process is taking right now is not read in a loop.
    arm(dueInMs === undefined ? fallback : Math.min(fallback, Math.max(50, dueInMs + 10)));
  }

  function wake(): void {
    if (closed) return;
    if (looking) {
      again = true;
      return;
    }
    looking = true;
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    look()
      .then(
        () => {
          if (failing) options.logger?.warn({}, 'webhooks: deliveries are taken again');
          failing = false;
        },
        (error) => {
          if (!failing) options.logger?.warn({ err: error }, 'webhooks: deliveries could not be taken; trying again');
          failing = true;
          arm(FALLBACK_POLL_MS);
        },
      )
      .finally(() => {
        looking = false;
        if (again) {
          again = false;
          wake();
        }
      });
  }

  const unsubscribe = options.wakeups.on(wakeTopics.webhooks, wake);
  const unconnect = options.wakeups.onConnect?.(wake);
  wake();
  return {
    wake,
    async close() {
      closed = true;
      unsubscribe();
      unconnect?.();
      if (timer !== undefined) clearTimeout(timer);
      stopping.abort();
      await Promise.allSettled([...sending]);
      await chain;
      await agent.close().catch(() => undefined);
    },
  };
}
