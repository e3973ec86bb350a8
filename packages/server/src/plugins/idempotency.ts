import { createHash, type Hash } from 'node:crypto';
import { Transform } from 'node:stream';
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  type IdempotencyScope,
  releaseIdempotencyKey,
} from '@maitento/store';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { serverErrors } from '../errors.js';
import type { ServerContext } from '../internal/context.js';

const METHODS = new Set(['POST', 'PUT', 'DELETE']);
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

interface IdempotencyState {
  scope?: IdempotencyScope;
  /** The claim's token: completing or releasing touches the record only while this request still holds it. */
  token?: string;
  hash?: Hash;
  fingerprint?: Buffer;
  /** True once the record is completed (or the answer is a replay): nothing is left to release. */
  settled: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    idempotency?: IdempotencyState;
  }
}

function headerKey(request: FastifyRequest): string | undefined {
  if (!METHODS.has(request.method)) return undefined;
  const value = request.headers['idempotency-key'];
  return value === undefined ? undefined : String(value);
}

function payloadText(payload: unknown): string | undefined {
  if (payload === null || payload === undefined) return '';
  if (typeof payload === 'string') return payload;
  if (Buffer.isBuffer(payload)) return payload.toString('utf8');
  return undefined;
}

/**
 * Adds Idempotency-Key handling to the POST/PUT/DELETE routes of `app` (register after auth): the first
 * request with a key runs and its answer (status < 500) is recorded; a retry with the same key, method, URL
 * and body gets the recorded answer again with `Idempotent-Replayed: true`, without running the route.
 */
export function registerIdempotency(app: FastifyInstance, ctx: ServerContext): void {
  const release = async (request: FastifyRequest): Promise<void> => {
    const state = request.idempotency;
    if (!state?.scope || state.settled) return;
    state.settled = true;
    try {
      await releaseIdempotencyKey(ctx.db, state.scope, state.token);
    } catch (error) {
      request.log.error({ err: error }, 'releasing the Idempotency-Key failed');
    }
  };
  app.decorateRequest('idempotency', undefined);

  // The fingerprint hashes the raw body as it streams to the parser, so no second copy of it is kept.
  app.addHook('preParsing', async (request, _reply, payload) => {
    if (headerKey(request) === undefined) return payload;
    const hash = createHash('sha256').update(`${request.method}\n${request.url}\n`);
    request.idempotency = { hash, settled: false };
    return payload.pipe(
      new Transform({
        transform(chunk, _encoding, done) {
          hash.update(chunk);
          done(null, chunk);
        },
      }),
    );
  });

  app.addHook('preHandler', async (request, reply) => {
    const key = headerKey(request);
    if (key === undefined) return;
    if (!KEY_PATTERN.test(key)) {
      throw serverErrors.create('api:request:invalid', {
        detail: 'The Idempotency-Key header must be 1 to 255 visible ASCII characters',
      });
    }
    const state = request.idempotency ?? { settled: false };
    request.idempotency = state;
    const hash = state.hash ?? createHash('sha256').update(`${request.method}\n${request.url}\n`);
    state.fingerprint = hash.digest();
    const scope = { namespace: request.identity.namespace, apiKeyId: request.identity.keyId, key };
    const claim = await claimIdempotencyKey(ctx.db, ctx.secretKey, scope, state.fingerprint);
    if (claim.kind === 'in-progress') throw serverErrors.create('api:request:in-progress');
    if (claim.kind === 'reused') throw serverErrors.create('api:request:idempotency-key-reused');
    if (claim.kind === 'replay') {
      state.settled = true;
      const { answer } = claim;
      reply.status(answer.status).header('idempotent-replayed', 'true');
      if (answer.contentType !== undefined) reply.header('content-type', answer.contentType);
      return reply.send(answer.status === 204 ? undefined : answer.body);
    }
    state.scope = scope;
    state.token = claim.token;
  });

  app.addHook('onSend', async (request, reply, payload) => {
    const state = request.idempotency;
    if (!state?.scope || state.settled) return payload;
    const body = payloadText(payload);
    if (reply.statusCode >= 500 || body === undefined) {
      // Released before the answer goes out, so a client retrying at once finds the key free.
      await release(request);
      return payload;
    }
    const contentType = reply.getHeader('content-type');
    try {
      await completeIdempotencyKey(
        ctx.db,
        ctx.secretKey,
        state.scope,
        {
          status: reply.statusCode,
          ...(contentType === undefined ? {} : { contentType: String(contentType) }),
          body,
        },
        state.token,
      );
      state.settled = true;
    } catch (error) {
      // The answer still goes out; the record is released below, so a retry runs the request again.
      request.log.error({ err: error }, 'recording the Idempotency-Key failed');
    }
    return payload;
  });

  // An answer that could not be recorded, or a request that ended without one, releases the key; onResponse
  // also runs when the client went away, but only after the route finished, so a retry never runs beside
  // the first attempt.
  app.addHook('onResponse', release);
}
