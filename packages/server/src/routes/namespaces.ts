import type { OperationRequest } from '@maitento/sdk';
import { createApiKey, createNamespace } from '@maitento/store';
import type { FastifyInstance } from 'fastify';
import type { ServerContext } from '../server/context.js';
import { operation, responses } from '../schemas/shared.js';

/** `POST /v1/namespaces`: the operator creates a namespace and gets its first admin key. */
export async function namespaceRoutes(app: FastifyInstance, ctx: ServerContext): Promise<void> {
  app.post<OperationRequest<'createNamespace'>>(
    '/namespaces',
    {
      config: { role: 'operator' },
      schema: {
        ...operation('createNamespace'),
        tags: ['namespaces'],
        summary: 'Create a namespace and its first admin key (operator only)',
        response: responses({ 201: { $ref: 'CreatedNamespace#' } }),
      },
    },
    async (request, reply) => {
      const created = await ctx.db.transaction(async (tx) => {
        const namespace = await createNamespace(tx, request.body.name);
        const key = await createApiKey(tx, namespace.name, { role: 'admin', name: 'first admin' });
        return { name: namespace.name, key: { id: key.id, key: key.key, role: key.role } };
      });
      return reply.status(201).send(created);
    },
  );
}
