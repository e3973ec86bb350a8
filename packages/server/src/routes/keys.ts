import type { OperationRequest } from '@maitento/sdk';
import { createApiKey, deleteApiKey, listApiKeys } from '@maitento/store';
import type { FastifyInstance } from 'fastify';
import type { ServerContext } from '../internal/context.js';
import { bindAnswer, sendBound } from '../plugins/idempotency.js';
import { operation, responses } from '../schemas/shared.js';

/** `/v1/keys`: an admin creates, lists and deletes the API keys of its namespace. */
export async function keyRoutes(app: FastifyInstance, ctx: ServerContext): Promise<void> {
  app.post<OperationRequest<'createKey'>>(
    '/keys',
    {
      config: { role: 'admin' },
      schema: {
        ...operation('createKey'),
        tags: ['keys'],
        summary: 'Create an API key; the key is shown in this answer only',
        response: responses({ 201: { $ref: 'CreatedKey#' } }),
      },
    },
    async (request, reply) => {
      // In a transaction of its own: a lost COMMIT answer is settled (decision 0101), and the answer, the only copy of
      // the new key, commits with the request's Idempotency-Key (decision 0102).
      const body = await ctx.db.transaction(async (tx) =>
        bindAnswer(tx, reply, 201, await createApiKey(tx, request.identity.namespace, request.body)),
      );
      return sendBound(reply, body);
    },
  );

  app.get(
    '/keys',
    {
      config: { role: 'admin' },
      schema: {
        ...operation('listKeys'),
        tags: ['keys'],
        summary: 'List the API keys of the namespace (never the keys themselves)',
        response: responses({ 200: { type: 'array', items: { $ref: 'KeyInfo#' } } }),
      },
    },
    async (request) => listApiKeys(ctx.db, request.identity.namespace),
  );

  app.delete<OperationRequest<'deleteKey'>>(
    '/keys/:id',
    {
      config: { role: 'admin' },
      schema: {
        ...operation('deleteKey'),
        tags: ['keys'],
        summary: 'Delete an API key',
        response: responses({ 204: { type: 'null' } }),
      },
    },
    async (request, reply) => {
      // In a transaction of its own: a lost COMMIT answer is settled (decision 0101); the answer commits with the
      // request's Idempotency-Key (decision 0102).
      const body = await ctx.db.transaction(async (tx) => {
        await deleteApiKey(tx, request.identity.namespace, request.params.id);
        return bindAnswer(tx, reply, 204);
      });
      // Answered once no server's cache still knows the key (or its lease has ended: it reads through).
      await ctx.lease.settle();
      return sendBound(reply, body);
    },
  );
}
