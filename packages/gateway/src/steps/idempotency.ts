import { createHash } from 'node:crypto';

/** Step 11: the `Idempotency-Key` of a non-GET call, the same for every retry of the same call id. */
export function idempotencyKeyFor(method: string, callId: string | undefined): string | undefined {
  if (method === 'GET' || callId === undefined || callId === '') return undefined;
  const digest = createHash('sha256').update('maitento-idempotency\u0000').update(callId).digest('base64url');
  return `mt-${digest.slice(0, 32)}`;
}
