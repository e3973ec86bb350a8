import { gatewayErrors, type ToolCallResult } from '@maitento/gateway';
import type { MtError } from '@maitento/errors';
import type { FastifyReply } from 'fastify';

/**
 * A direct call (REST, MCP) over its tool's limit (docs/limits.md): sets `Retry-After` (RFC 9110 §10.2.3) and the
 * IETF `RateLimit` and `RateLimit-Policy` fields (draft-ietf-httpapi-ratelimit-headers) on the reply and returns the
 * 429 error to throw.
 */
export function limitRefusal(
  reply: FastifyReply,
  tool: string,
  limited: NonNullable<ToolCallResult['limited']>,
): MtError {
  reply.header('retry-after', String(limited.retryAfterSeconds));
  reply.header('ratelimit', limited.rateLimit);
  reply.header('ratelimit-policy', limited.rateLimitPolicy);
  return gatewayErrors.create('api:limits:exceeded', {
    name: tool,
    done: 'called',
    one: 'call',
    limit: limited.limit,
    seconds: limited.retryAfterSeconds,
  });
}
