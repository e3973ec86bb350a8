import type { FastifyInstance } from 'fastify';
import type { ServerContext } from '../internal/context.js';
import { operation, responses } from '../schemas/shared.js';

/**
 * `GET /health`: no key needed; 200 when the server answers and its database does, for container healthchecks,
 * with whether its wake-ups are listening (false: waiters fall back to their slow poll, see docs/operations.md).
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
        }),
      },
    },
    async () => {
      await ctx.db.query('SELECT 1');
      return { status: 'ok' as const, wakeups: { listening: ctx.wakeups.listening } };
    },
  );
}
