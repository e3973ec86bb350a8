import type { ResourceKind } from '@maitento/lang';
import { listResources } from '@maitento/store';
import type { FastifyInstance } from 'fastify';
import type { ServerContext } from '../internal/context.js';
import { responses } from '../schemas/shared.js';

const item = {
  type: 'object',
  properties: { name: { type: 'string' }, latestVersion: { type: 'integer' } },
  required: ['name', 'latestVersion'],
};

/** `GET /v1/agents` and `GET /v1/interactions`: the names and latest versions. */
export async function listRoutes(app: FastifyInstance, ctx: ServerContext): Promise<void> {
  const lists: [string, ResourceKind][] = [
    ['/agents', 'agent'],
    ['/interactions', 'interaction'],
  ];
  for (const [path, kind] of lists) {
    app.get(
      path,
      {
        schema: {
          tags: [path.slice(1)],
          summary: `List ${path.slice(1)} with their latest versions`,
          response: responses({ 200: { type: 'array', items: item } }),
        },
      },
      async (request) => listResources(ctx.db, request.identity.namespace, kind),
    );
  }
}
