import { isMtError } from '@maitento/errors';
import type { FastifyInstance } from 'fastify';
import type { ServerContext } from '../internal/context.js';
import { operation, responses } from '../schemas/shared.js';

/**
 * `GET /health`: no key needed; 200 `ok` when the server answers and its database does, 503 `degraded` when the
 * database does not answer within `MT_DB_TIMEOUT_MS` (for container healthchecks); both say whether its wake-ups
 * are listening (false: waiters fall back to their slow poll, see docs/operations.md).
 */
export async function healthRoutes(app: FastifyInstance, ctx: ServerContext): Promise<void> {
  app.get(
    '/health',
    {
      schema: {
        ...operation('getHealth'),
        tags: ['health'],
        summary: 'Liveness and database check, and whether wake-ups are listening (no API key needed)',
        security: [],
        response: responses({
          200: {
            type: 'object',
            properties: {
              status: { type: 'string', enum: ['ok'] },
              wakeups: {
                type: 'object',
                properties: { listening: { type: 'boolean' } },
                required: ['listening'],
              },
            },
            required: ['status', 'wakeups'],
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
            },
            required: ['status', 'database', 'wakeups'],
          },
        }),
      },
    },
    async (_request, reply) => {
      const wakeups = { listening: ctx.wakeups.listening };
      try {
        await ctx.db.query('SELECT 1');
      } catch (error) {
        if (!isMtError(error) || error.code !== 'api:store:unavailable') throw error;
        return reply.status(503).send({ status: 'degraded' as const, database: 'unreachable' as const, wakeups });
      }
      return { status: 'ok' as const, wakeups };
    },
  );
}
