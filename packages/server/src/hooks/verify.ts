import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Trigger } from '@maitento/lang';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';

// How an inbound webhook's delivery is verified (docs/schedules-and-triggers.md), one function per style: Standard
// Webhooks through its reference library, GitHub's and Stripe's HMAC-SHA256 as they document them. Every comparison
// of a signature is in constant time.

/** What the verification found: the delivery's own id (from a header, by style) or why it is refused. */
export type Verdict = { ok: true; eventId?: string } | { ok: false; reason: 'signature' | 'timestamp'; detail: string };

type Headers = Record<string, string | string[] | undefined>;

const header = (headers: Headers, name: string): string | undefined => {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
};

function sameHex(expected: Buffer, givenHex: string): boolean {
  if (!/^[0-9a-f]+$/i.test(givenHex)) return false;
  const given = Buffer.from(givenHex, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

function standardWebhooks(secret: string, raw: Buffer, headers: Headers): Verdict {
  const id = header(headers, 'webhook-id');
  try {
    new Webhook(secret).verify(raw, {
      'webhook-id': id ?? '',
      'webhook-timestamp': header(headers, 'webhook-timestamp') ?? '',
      'webhook-signature': header(headers, 'webhook-signature') ?? '',
    });
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    const stale = error instanceof WebhookVerificationError && /timestamp too (old|new)/i.test(detail);
    return { ok: false, reason: stale ? 'timestamp' : 'signature', detail };
  }
  return id === undefined ? { ok: true } : { ok: true, eventId: id };
}

function github(secret: string, raw: Buffer, headers: Headers): Verdict {
  const given = header(headers, 'x-hub-signature-256');
  if (given === undefined || !given.startsWith('sha256=')) {
    return { ok: false, reason: 'signature', detail: 'no X-Hub-Signature-256 header of the form sha256=<hex>' };
  }
  const expected = createHmac('sha256', secret).update(raw).digest();
  if (!sameHex(expected, given.slice('sha256='.length))) {
    return { ok: false, reason: 'signature', detail: 'X-Hub-Signature-256 does not match the body' };
  }
  const id = header(headers, 'x-github-delivery');
  return id === undefined ? { ok: true } : { ok: true, eventId: id };
}

function stripe(secret: string, raw: Buffer, headers: Headers, toleranceSeconds: number, now: number): Verdict {
  const given = header(headers, 'stripe-signature');
  const parts = (given ?? '').split(',').map((part) => part.trim().split('='));
  const t = parts.find(([key]) => key === 't')?.[1];
  const signatures = parts.filter(([key]) => key === 'v1').map(([, value]) => value ?? '');
  if (t === undefined || !/^\d+$/.test(t) || signatures.length === 0) {
    return {
      ok: false,
      reason: 'signature',
      detail: 'no Stripe-Signature header with t=<timestamp> and v1=<signature>',
    };
  }
  const expected = createHmac('sha256', secret).update(`${t}.`).update(raw).digest();
  if (!signatures.some((signature) => sameHex(expected, signature))) {
    return { ok: false, reason: 'signature', detail: 'no v1 signature of Stripe-Signature matches the body' };
  }
  const age = Math.floor(now / 1000) - Number(t);
  if (Math.abs(age) > toleranceSeconds) {
    return {
      ok: false,
      reason: 'timestamp',
      detail: `the signed timestamp is ${age} s old; at most ${toleranceSeconds} s is taken`,
    };
  }
  return { ok: true };
}

/** Verifies one delivery of `trigger` with its secret's value. */
export function verifyDelivery(
  verify: NonNullable<Trigger['verify']>,
  secret: string,
  raw: Buffer,
  headers: Headers,
  now = Date.now(),
): Verdict {
  switch (verify.style) {
    case 'standard-webhooks':
      return standardWebhooks(secret, raw, headers);
    case 'github':
      return github(secret, raw, headers);
    case 'stripe':
      return stripe(secret, raw, headers, verify.toleranceSeconds, now);
  }
}

/** The value at a JSON Pointer (RFC 6901) of `document`, or undefined when there is none. */
export function pointerValue(document: unknown, pointer: string): unknown {
  if (pointer === '') return document;
  let value: unknown = document;
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (Array.isArray(value)) {
      if (!/^(0|[1-9][0-9]*)$/.test(key)) return undefined;
      value = value[Number(key)];
    } else if (typeof value === 'object' && value !== null && Object.hasOwn(value, key)) {
      value = (value as Record<string, unknown>)[key];
    } else return undefined;
  }
  return value;
}
