import type { FastifyInstance } from 'fastify';
import type { ServerContext } from '../internal/context.js';
import { operation, responses } from '../schemas/shared.js';

/** `GET /health`: no key needed; 200 when the server answers and its database does, for container healthchecks. */
export async function healthRoutes(app: FastifyInstance, ctx: ServerContext): Promise<void> {
  app.get(
    '/health',
    {
      schema: {
        ...operation('getHealth'),
        tags: ['health'],
        summary: 'Liveness and database check (no API key needed)',
        security: [],
        response: responses({
          200: { type: 'object', properties: { status: { type: 'string', enum: ['ok'] } }, required: ['status'] },
        }),
      },
    },
    async () => {
      await ctx.db.query('SELECT 1');
      return { status: 'ok' as const };
    },
  );
}
