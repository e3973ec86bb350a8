import { isMtError } from '@maitento/errors';
import { operation } from '../openapi/operation.js';
import type { Api } from '../schemas/shared.js';
import type { ServerContext } from '../server/context.js';

/**
 * `GET /health`: no key needed; 200 `ok` when the server answers and its database does, 503 `degraded` when the
 * database does not answer within `MT_DB_TIMEOUT_MS` (for container healthchecks); both say whether its wake-ups
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

export async function healthRoutes(app: Api, ctx: ServerContext): Promise<void> {
  app.get(
    '/health',
    {
      schema: operation({
        operationId: 'getHealth',
        tags: ['health'],
        summary: 'Liveness and database check, and whether wake-ups are listening (no API key needed)',
        description:
          'Tells a load balancer or orchestrator whether this server and its database answer, and whether wake-ups ' +
          '(LISTEN/NOTIFY) are listening. Needs no API key.',
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
              database: { type: 'string', enum: ['unreachable'] },
              wakeups: {
                type: 'object',
                properties: { listening: { type: 'boolean' } },
                required: ['listening'],
              },
              cache: cacheHealth,
            },
            required: ['status', 'database', 'wakeups', 'cache'],
          },
        },
        ok: 'The server and its database answer',
        errors: [],
        examples: {
          ok: { status: 'ok', wakeups: { listening: true }, cache: { mode: 'live' } },
          statuses: {
            '503': {
              description:
                'Service Unavailable: the database did not answer; the server is up but cannot serve requests',
              example: {
                status: 'degraded',
                database: 'unreachable',
                wakeups: { listening: false },
                cache: { mode: 'read-through', reason: 'the LISTEN connection is lost' },
              },
            },
          },
        },
      }),
    },
    async (_request, reply) => {
      const wakeups = { listening: ctx.wakeups.listening };
      const cache = ctx.lease.state();
      try {
        await ctx.db.query('SELECT 1');
      } catch (error) {
        // A `SELECT 1` sent on a connection gone silent fails as outcome-unknown (its answer never came): unreachable too.
        if (
          !isMtError(error) ||
          (error.code !== 'api:store:unavailable' && error.code !== 'api:store:outcome-unknown')
        ) {
          throw error;
        }
        return reply
          .status(503)
          .send({ status: 'degraded' as const, database: 'unreachable' as const, wakeups, cache });
      }
      return { status: 'ok' as const, wakeups, cache };
    },
  );
}
