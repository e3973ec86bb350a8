import type { FastifyReply, FastifyRequest } from 'fastify';
import { FETCH_POLL_MS, HEARTBEAT_SECONDS, type WorkerHealth } from '@maitento/engine';
import { isMtError } from '@maitento/errors';
import type { CacheLeaseState, Db } from '@maitento/store';
import { operation } from '../openapi/operation.js';
import type { Api } from '../schemas/shared.js';
import type { ServerContext } from '../server/context.js';

/** How long readiness waits for the database's answer: `GET /health` answers within 1 s even when it hangs. */
export const HEALTH_PROBE_MS = 800;
/**
 * How long the worker's fetch loop may go without turning before readiness says so: it turns every
 * {@link FETCH_POLL_MS} while idle, and each of its statements has the store's deadline.
 */
export const WORKER_STALL_MS = 5 * FETCH_POLL_MS;
/** How late the held jobs' heartbeat may be before readiness says so: half the time pg-boss gives a job. */
export const HEARTBEAT_LATE_MS = (HEARTBEAT_SECONDS * 1000) / 2;

/** Whether the database answers `SELECT 1` within {@link HEALTH_PROBE_MS} (the statement keeps its own deadline). */
async function databaseAnswers(db: Db): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), HEALTH_PROBE_MS);
  });
  const probe = db.query('SELECT 1').then(
    () => true,
    (error: unknown) => {
      // A `SELECT 1` sent on a connection gone silent fails as outcome-unknown (its answer never came): unreachable too.
      const unreachable = ['api:store:unavailable', 'api:store:outcome-unknown'];
      if (!isMtError(error) || !unreachable.includes(error.code)) throw error;
      return false;
    },
  );
  try {
    return await Promise.race([probe, late]);
  } finally {
    clearTimeout(timer);
    // A probe that lost the race still ends (within the store's deadline): its outcome is not needed.
    probe.catch(() => {});
  }
}

/**
 * `GET /health` (readiness): no key needed; 200 `ok` when this process can serve: its database answers within
 * {@link HEALTH_PROBE_MS} and, with a worker, its fetch loop turned within {@link WORKER_STALL_MS} and its held jobs'
 * heartbeat is not late by {@link HEARTBEAT_LATE_MS}; 503 `degraded` with the `reason` otherwise (for container
 * healthchecks and load balancers). It answers within 1 s even when the database hangs. Both say whether its wake-ups
 * are listening (false: waiters fall back to their slow poll, see docs/operations.md) and the cache's mode (`live`
 * under the cache lease; `read-through` with its reason: every request reads the cache epoch, correct but slower;
 * `off` on PGlite).
 */
// The cache's mode: `live` (no statement a request), `read-through` (degraded: the epoch read on each request, correct
// but slower; the reason says why), `off` (PGlite). The status stays 200: a read-through server answers correctly.
const cacheHealth = {
  type: 'object',
  properties: {
    mode: { type: 'string', enum: ['live', 'read-through', 'off'] },
    reason: { type: 'string' },
  },
  required: ['mode'],
} as const;

/** What readiness reads: this process's database, wake-ups, cache lease, worker, and whether it is shutting down. */
export interface ReadinessInputs {
  db: Db;
  listening: boolean;
  cache: CacheLeaseState;
  worker: WorkerHealth | null;
  shuttingDown: boolean;
  /**
   * `mt worker` only: unready while every slot waits on a call older than this (a frozen upstream holds the worker).
   * Not `mt serve`'s: its API serves whatever its worker waits on.
   */
  stuckMs?: number;
}

/** Readiness's answer (`GET /health` of `mt serve`, and of `mt worker`'s health port): 503 when `degraded`. */
export type Readiness =
  | { status: 'ok'; wakeups: { listening: boolean }; cache: CacheLeaseState }
  | {
      status: 'degraded';
      database: 'ok' | 'unreachable';
      reason: string;
      wakeups: { listening: boolean };
      cache: CacheLeaseState;
    };

/** The one decision of readiness, for `mt serve` and `mt worker` alike; the first reason that holds is given. */
export async function readiness(inputs: ReadinessInputs): Promise<Readiness> {
  const wakeups = { listening: inputs.listening };
  const cache = inputs.cache;
  // While shutting down the pool may be closing: a probe that fails then only says "unreachable".
  const probe = inputs.shuttingDown ? databaseAnswers(inputs.db).catch(() => false) : databaseAnswers(inputs.db);
  const database = (await probe) ? ('ok' as const) : ('unreachable' as const);
  const worker = inputs.worker;
  const stuck =
    worker !== null && inputs.stuckMs !== undefined && worker.slots !== undefined
      ? (worker.callAgesMs ?? []).filter((ms) => ms > (inputs.stuckMs ?? 0)).length
      : 0;
  const reason = inputs.shuttingDown
    ? 'shutting down'
    : database === 'unreachable'
      ? `the database did not answer within ${HEALTH_PROBE_MS} ms`
      : worker !== null && worker.sinceTurnMs !== null && worker.sinceTurnMs > WORKER_STALL_MS
        ? `the worker's fetch loop has not turned for ${worker.sinceTurnMs} ms`
        : worker !== null && worker.heartbeatLateMs > HEARTBEAT_LATE_MS
          ? `the held runs' heartbeat has failed for ${worker.heartbeatLateMs} ms`
          : worker?.slots !== undefined && stuck >= worker.slots
            ? `all ${worker.slots} slots have waited on a call for over ${inputs.stuckMs} ms`
            : undefined;
  if (reason !== undefined) return { status: 'degraded', database, reason, wakeups, cache };
  return { status: 'ok', wakeups, cache };
}

export async function healthRoutes(app: Api, ctx: ServerContext): Promise<void> {
  const ready = async (_request: FastifyRequest, reply: FastifyReply) => {
    const answer = await readiness({
      db: ctx.db,
      listening: ctx.wakeups.listening,
      cache: ctx.lease.state(),
      worker: ctx.engine.workerHealth?.() ?? null,
      shuttingDown: ctx.shutdown.begun,
    });
    if (answer.status === 'degraded') return reply.status(503).send(answer);
    return answer;
  };
  app.get(
    '/health',
    {
      schema: operation({
        operationId: 'getHealth',
        tags: ['health'],
        summary: 'Readiness: the database, the worker, and whether wake-ups are listening (no API key needed)',
        description:
          'Readiness: tells a load balancer or orchestrator whether this server can serve (its database answers within ' +
          "800 ms; with a worker, its fetch loop turns and its runs' heartbeat goes through; it is not shutting down), and whether wake-ups " +
          '(LISTEN/NOTIFY) are listening. Answers within 1 s. Needs no API key.',
        security: [],
        response: {
          200: {
            type: 'object',
            properties: {
              status: { type: 'string', enum: ['ok'] },
              wakeups: {
                type: 'object',
                properties: { listening: { type: 'boolean' } },
                required: ['listening'],
              },
              cache: cacheHealth,
            },
            required: ['status', 'wakeups', 'cache'],
          },
          503: {
            type: 'object',
            properties: {
              status: { type: 'string', enum: ['degraded'] },
              database: { type: 'string', enum: ['ok', 'unreachable'] },
              reason: { type: 'string' },
              wakeups: {
                type: 'object',
                properties: { listening: { type: 'boolean' } },
                required: ['listening'],
              },
              cache: cacheHealth,
            },
            required: ['status', 'database', 'reason', 'wakeups', 'cache'],
          },
        },
        ok: 'The server and its database answer',
        errors: [],
        examples: {
          ok: { status: 'ok', wakeups: { listening: true }, cache: { mode: 'live' } },
          statuses: {
            '503': {
              description:
                'Service Unavailable: the server is shutting down, the database did not answer within 800 ms, or the worker stalled; the reason says which',
              example: {
                status: 'degraded',
                database: 'unreachable',
                reason: 'the database did not answer within 800 ms',
                wakeups: { listening: false },
                cache: { mode: 'read-through', reason: 'the LISTEN connection is lost' },
              },
            },
          },
        },
      }),
    },
    ready,
  );
  // `GET /health/ready`: the same readiness under the name orchestrators' conventions use (beside /health/live); not in
  // the OpenAPI document, as /health/live is not.
  app.get('/health/ready', { schema: { hide: true } }, ready);
  // Liveness: the process turns (its event loop answers); no database, no worker state. Not in the OpenAPI
  // document, as /openapi.json is not: an orchestrator's probe, not part of the API.
  app.get('/health/live', { schema: { hide: true } }, async () => ({ status: 'ok' as const }));
}
