import { createHash, type Hash } from 'node:crypto';
import { Transform } from 'node:stream';
import {
  bindIdempotentAnswer,
  claimIdempotencyKey,
  completeIdempotencyKey,
  IDEMPOTENCY_LEASE_SECONDS,
  type IdempotencyScope,
  type Queryable,
  type IdempotentEffect,
  releaseIdempotencyKey,
  renewIdempotencyKey,
  withIdempotencyKey,
} from '@maitento/store';
import { isMtError } from '@maitento/errors';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { serverErrors } from '../errors.js';
import type { ServerContext } from '../server/context.js';

/** The methods whose requests may carry an `Idempotency-Key` (the document declares it on them). */
export const IDEMPOTENT_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'DELETE']);
/** What an `Idempotency-Key` may be: 1 to 255 visible ASCII characters. */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

interface IdempotencyState {
  scope?: IdempotencyScope;
  /** The claim's token: completing or releasing touches the record only while this request still holds it. */
  token?: string;
  /** Renews the claim's lease every third of it while the request runs; cleared when it completes. */
  renewal?: NodeJS.Timeout;
  /** The renewal in flight, awaited before the record is completed or released (it changes the token). */
  renewing?: Promise<void>;
  hash?: Hash;
  fingerprint?: Buffer;
  /** True once the record is completed (or the answer is a replay): nothing is left to release. */
  settled: boolean;
  /**
   * True when the request failed with a write whose outcome is not known (`api:store:outcome-unknown`): its key is
   * not released but left held until its lease ends, so a retry answers `api:request:in-progress` rather than
   * running the request again beside an effect that may have happened.
   */
  uncertain?: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    idempotency?: IdempotencyState;
  }
}

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * For a route whose whole answer is known inside its write transaction (a new key, whose secret is shown once; a new
 * secret; a deleted key; a deploy's plan; a written file): serialises `payload` as the route answers it (`status`, the route's response schema) and,
 * when the request holds an Idempotency-Key, records that answer with the key in the transaction `tx`, so the key and
 * the effect commit together. Resolves with the body to send with {@link sendBound}.
 */
export async function bindAnswer(
  tx: Queryable,
  reply: FastifyReply,
  status: number,
  payload?: unknown,
): Promise<string> {
  reply.status(status);
  const body = payload === undefined ? '' : (reply.serialize(payload) as string);
  await bindIdempotentAnswer(tx, { status, ...(payload === undefined ? {} : { contentType: JSON_TYPE }), body });
  return body;
}

/** Sends a body made by {@link bindAnswer} (its status is already set). */
export function sendBound(reply: FastifyReply, body: string): FastifyReply {
  return body === '' ? reply.send() : reply.type(JSON_TYPE).send(body);
}

function headerKey(request: FastifyRequest): string | undefined {
  if (!IDEMPOTENT_METHODS.has(request.method)) return undefined;
  const value = request.headers['idempotency-key'];
  return value === undefined ? undefined : String(value);
}

function payloadText(payload: unknown): string | undefined {
  if (payload === null || payload === undefined) return '';
  if (typeof payload === 'string') return payload;
  if (Buffer.isBuffer(payload)) return payload.toString('utf8');
  return undefined;
}

/** Options of {@link registerIdempotency}. */
export interface IdempotencyOptions {
  /** How long a claim holds its key without renewal (default `IDEMPOTENCY_LEASE_SECONDS`; tests shorten it). */
  leaseSeconds?: number;
}

// Stops renewing the lease of the request's claim, and waits for a renewal in flight (it may change the token).
async function stopRenewal(state: IdempotencyState): Promise<void> {
  if (state.renewal !== undefined) {
    clearInterval(state.renewal);
    state.renewal = undefined;
  }
  await state.renewing;
}

/**
 * Adds Idempotency-Key handling to the POST/PUT/DELETE routes of `app` (register after auth): the first
 * request with a key runs and its answer (status < 500) is recorded; a retry with the same key, method, URL
 * and body gets the recorded answer again with `Idempotent-Replayed: true`, without running the route. A 5xx answer
 * releases the key (the failure is known to have left nothing: a statement PostgreSQL ended or that was never sent),
 * except `api:store:outcome-unknown`, after which the key stays held until its lease ends. The side-effecting routes
 * bind their effect to the key in the effect's own transaction (`bindIdempotentEffect`, decision 0102): a key whose
 * effect committed is never released, and a retry of it — at any time, after the lease too — answers from the effect
 * (the run's view now, with the first status) and never runs the request again. While
 * the first request runs, its claim's lease is renewed every third of it, so a long request (a deploy that
 * lists MCP servers, a master key rotation) keeps its key however long it runs; only a crashed one loses it.
 */
export function registerIdempotency(app: FastifyInstance, ctx: ServerContext, options: IdempotencyOptions = {}): void {
  // What a committed effect answers now: the run's (or the approval's) view, as the route would answer it.
  const effectView = (request: FastifyRequest, effect: IdempotentEffect): Promise<unknown> => {
    const { namespace } = request.identity;
    return effect.kind === 'run'
      ? ctx.engine.getRun(namespace, effect.id, request.identity)
      : ctx.engine.getApproval(namespace, effect.id);
  };
  const leaseSeconds = options.leaseSeconds ?? IDEMPOTENCY_LEASE_SECONDS;
  const renew = (request: FastifyRequest, state: IdempotencyState): void => {
    const { scope, token } = state;
    if (scope === undefined || token === undefined || state.renewing !== undefined) return;
    state.renewing = renewIdempotencyKey(ctx.db, scope, token)
      .then((renewed) => {
        if (renewed !== undefined) {
          state.token = renewed;
          return;
        }
        // Taken over (this server was stalled past the lease): the other claim's record is left alone.
        if (state.renewal !== undefined) clearInterval(state.renewal);
        state.renewal = undefined;
        request.log.warn('the Idempotency-Key of this request was taken over by a retry');
      })
      .catch((error: unknown) => {
        // A failed renewal is tried again at the next tick; the lease still has two thirds left.
        request.log.error({ err: error }, 'renewing the Idempotency-Key failed');
      })
      .finally(() => {
        state.renewing = undefined;
      });
  };
  const release = async (request: FastifyRequest): Promise<void> => {
    const state = request.idempotency;
    if (state !== undefined) await stopRenewal(state);
    if (!state?.scope || state.settled) return;
    state.settled = true;
    const { scope, token } = state;
    try {
      await releaseIdempotencyKey(ctx.db, scope, token);
    } catch (error) {
      // The database did not take it (it is unreachable: the request most likely failed for that reason too). The
      // key stays held, a retry answering in-progress, until the release goes through: tried again every second
      // for as long as the lease (the token fences it: a retry that took the key over since is left alone).
      request.log.error({ err: error }, 'releasing the Idempotency-Key failed; trying again every second');
      let tries = 0;
      const again = setInterval(() => {
        if (++tries > leaseSeconds) return clearInterval(again);
        releaseIdempotencyKey(ctx.db, scope, token).then(
          () => clearInterval(again),
          () => {},
        );
      }, 1000);
      again.unref();
    }
  };
  app.decorateRequest('idempotency', undefined);

  // The fingerprint hashes the raw body as it streams to the parser, so no second copy of it is kept.
  // The hooks run on every request of /v1, and most carry no key: those pass on at once, without the promise and the
  // microtask turn an async hook costs (hooks with `done`); the rest run the async step below.
  app.addHook('preParsing', (request, _reply, payload, done) => {
    if (headerKey(request) === undefined) return done(null, payload);
    const hash = createHash('sha256').update(`${request.method}\n${request.url}\n`);
    request.idempotency = { hash, settled: false };
    done(
      null,
      payload.pipe(
        new Transform({
          transform(chunk, _encoding, next) {
            hash.update(chunk);
            next(null, chunk);
          },
        }),
      ),
    );
  });

  const claim = async (request: FastifyRequest, reply: FastifyReply, key: string): Promise<void> => {
    if (!IDEMPOTENCY_KEY_PATTERN.test(key)) {
      throw serverErrors.create('api:request:invalid', {
        detail: 'The Idempotency-Key header must be 1 to 255 visible ASCII characters',
      });
    }
    const state = request.idempotency ?? { settled: false };
    request.idempotency = state;
    const hash = state.hash ?? createHash('sha256').update(`${request.method}\n${request.url}\n`);
    state.fingerprint = hash.digest();
    const scope = { namespace: request.identity.namespace, apiKeyId: request.identity.keyId, key };
    const claim = await claimIdempotencyKey(ctx.db, ctx.secretKey, scope, state.fingerprint, leaseSeconds);
    if (claim.kind === 'in-progress') throw serverErrors.create('api:request:in-progress');
    if (claim.kind === 'reused') throw serverErrors.create('api:request:idempotency-key-reused');
    if (claim.kind === 'effect') {
      // The first attempt's effect committed with the key, its answer never recorded (its server was killed between
      // the two, or its outcome stayed unknown): answered from the effect, never run again.
      state.settled = true;
      const view = await effectView(request, claim.effect);
      reply.status(claim.effect.status).header('idempotent-replayed', 'true').send(view);
      return;
    }
    if (claim.kind === 'replay') {
      state.settled = true;
      const { answer } = claim;
      reply.status(answer.status).header('idempotent-replayed', 'true');
      if (answer.contentType !== undefined) reply.header('content-type', answer.contentType);
      reply.send(answer.status === 204 ? undefined : answer.body);
      return;
    }
    state.scope = scope;
    state.token = claim.token;
    state.renewal = setInterval(() => renew(request, state), (leaseSeconds * 1000) / 3);
    state.renewal.unref();
  };
  // The handler runs with the held key in its async context: a write transaction of the route binds its effect to the
  // key's record (bindIdempotentEffect), the two committing together.
  app.addHook('preHandler', (request, reply, done) => {
    const key = headerKey(request);
    if (key === undefined) return done();
    claim(request, reply, key).then(() => {
      const { scope, token } = request.idempotency ?? {};
      if (scope === undefined || token === undefined) return done();
      withIdempotencyKey({ scope, token, secretKey: ctx.secretKey }, () => done());
    }, done);
  });

  const record = async (request: FastifyRequest, reply: FastifyReply, state: IdempotencyState, payload: unknown) => {
    const { scope } = state;
    if (scope === undefined) return;
    await stopRenewal(state);
    const body = payloadText(payload);
    if (state.uncertain) {
      // Held, not renewed: see IdempotencyState.uncertain.
      state.settled = true;
      request.log.warn('the outcome of this request is unknown: its Idempotency-Key stays held until its lease ends');
      return;
    }
    if (reply.statusCode >= 500 || body === undefined) {
      // Released before the answer goes out, so a client retrying at once finds the key free.
      await release(request);
      return;
    }
    const contentType = reply.getHeader('content-type');
    try {
      await completeIdempotencyKey(
        ctx.db,
        ctx.secretKey,
        scope,
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
  };
  // The one failure after which a key is not released: see IdempotencyState.uncertain.
  app.addHook('onError', (request, _reply, error, done) => {
    const state = request.idempotency;
    if (state !== undefined && isMtError(error) && error.code === 'api:store:outcome-unknown') state.uncertain = true;
    done();
  });
  app.addHook('onSend', (request, reply, payload, done) => {
    const state = request.idempotency;
    if (!state?.scope || state.settled) return done(null, payload);
    record(request, reply, state, payload).then(
      () => done(null, payload),
      (error: Error) => done(error),
    );
  });

  // An answer that could not be recorded, or a request that ended without one, releases the key; onResponse
  // also runs when the client went away, but only after the route finished, so a retry never runs beside
  // the first attempt.
  app.addHook('onResponse', (request, _reply, done) => {
    if (request.idempotency === undefined) return done();
    release(request).then(() => done(), done);
  });
}
