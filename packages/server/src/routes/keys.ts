import { createApiKey, deleteApiKey, type KeyRole, listApiKeys } from '@maitento/store';
import type { FastifyInstance } from 'fastify';
import type { ServerContext } from '../internal/context.js';
import { idParams, responses } from '../schemas/shared.js';

/** `/v1/keys`: an admin creates, lists and deletes the API keys of its namespace. */
export async function keyRoutes(app: FastifyInstance, ctx: ServerContext): Promise<void> {
  app.post<{ Body: { name?: string; role: KeyRole } }>(
    '/keys',
    {
      config: { role: 'admin' },
      schema: {
        operationId: 'createKey',
        tags: ['keys'],
        summary: 'Create an API key; the key is shown in this answer only',
        body: {
          type: 'object',
          properties: {
            name: { type: 'string', maxLength: 200 },
            role: { type: 'string', enum: ['admin', 'user'] },
          },
          required: ['role'],
          additionalProperties: false,
        },
        response: responses({ 201: { $ref: 'CreatedKey#' } }),
      },
    },
    async (request, reply) => {
      const key = await createApiKey(ctx.db, request.identity.namespace, request.body);
      return reply.status(201).send(key);
    },
  );

  app.get(
    '/keys',
    {
      config: { role: 'admin' },
      schema: {
        operationId: 'listKeys',
        tags: ['keys'],
        summary: 'List the API keys of the namespace (never the keys themselves)',
        response: responses({ 200: { type: 'array', items: { $ref: 'KeyInfo#' } } }),
      },
    },
    async (request) => listApiKeys(ctx.db, request.identity.namespace),
  );

  app.delete<{ Params: { id: string } }>(
    '/keys/:id',
    {
      config: { role: 'admin' },
      schema: {
        operationId: 'deleteKey',
        tags: ['keys'],
        summary: 'Delete an API key',
        params: idParams,
        response: responses({ 204: { type: 'null' } }),
      },
    },
    async (request, reply) => {
      await deleteApiKey(ctx.db, request.identity.namespace, request.params.id);
      ctx.cache.changed({ kind: 'key', namespace: request.identity.namespace, id: request.params.id });
      return reply.status(204).send();
    },
  );
}
