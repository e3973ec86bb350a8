import { CreateKeyBodySchema, IdParamsSchema } from '@maitento/sdk';
import { createApiKey, deleteApiKey, listApiKeys, recordAudit } from '@maitento/store';
import { auditContext } from '../http/actor.js';
import { SECRET_ID } from '../openapi/examples.js';
import { operation } from '../openapi/operation.js';
import type { Api } from '../schemas/shared.js';
import type { ServerContext } from '../server/context.js';
import { bindAnswer, sendBound } from '../plugins/idempotency.js';

/** `/v1/keys`: an admin creates, lists and deletes the API keys of its namespace. */
export async function keyRoutes(app: Api, ctx: ServerContext): Promise<void> {
  app.post(
    '/keys',
    {
      config: { role: 'admin' },
      schema: operation({
        operationId: 'createKey',
        tags: ['keys'],
        summary: 'Create an API key; the key is shown in this answer only',
        description:
          "Creates an API key of the calling key's namespace with the role asked for (admin: may change the namespace; " +
          'user: may read, call and run). The key itself is in this answer only; only its hash is stored. secrets ' +
          'grants the key secrets of the namespace by id: a user key names only those in a run (an admin key any).',
        body: CreateKeyBodySchema,
        response: { 201: { $ref: 'CreatedKey#' } },
        ok: 'The key, with its secret value (shown once)',
        errors: ['api:secrets:not-found'],
        examples: { body: { name: 'shop-a desk', role: 'user', secrets: [SECRET_ID] } },
      }),
    },
    async (request, reply) => {
      // In a transaction of its own: a lost COMMIT answer is settled (decision 0101), and the answer, the only copy of
      // the new key, commits with the request's Idempotency-Key (decision 0102) and its audit row.
      const { namespace } = request.identity;
      const body = await ctx.db.transaction(async (tx) => {
        const made = await createApiKey(tx, namespace, request.body);
        await recordAudit(tx, {
          ...auditContext(request),
          namespace,
          action: 'key.created',
          target: { kind: 'key', id: made.id },
          after: { name: made.name, role: made.role, secrets: made.secrets },
        });
        return bindAnswer(tx, reply, 201, made);
      });
      return sendBound(reply, body);
    },
  );

  app.get(
    '/keys',
    {
      config: { role: 'admin' },
      schema: operation({
        operationId: 'listKeys',
        tags: ['keys'],
        summary: 'List the API keys of the namespace (never the keys themselves)',
        description:
          "Lists the API keys of the calling key's namespace: id, name, role, the secrets granted to it and creation time, never the key.",
        response: { 200: { type: 'array', items: { $ref: 'KeyInfo#' } } },
        ok: 'The API keys of the namespace',
        errors: [],
      }),
    },
    async (request) => listApiKeys(ctx.db, request.identity.namespace),
  );

  app.delete(
    '/keys/:id',
    {
      config: { role: 'admin' },
      schema: operation({
        operationId: 'deleteKey',
        tags: ['keys'],
        summary: 'Delete an API key',
        description:
          'Deletes an API key of the namespace: its next request is refused, and its open event streams end. A key may delete itself.',
        params: IdParamsSchema,
        response: { 204: { type: 'null' } },
        ok: 'The key was deleted',
        errors: ['api:keys:not-found'],
      }),
    },
    async (request, reply) => {
      // In a transaction of its own: a lost COMMIT answer is settled (decision 0101); the answer commits with the
      // request's Idempotency-Key (decision 0102) and its audit row.
      const { namespace } = request.identity;
      const body = await ctx.db.transaction(async (tx) => {
        const gone = await deleteApiKey(tx, namespace, request.params.id);
        await recordAudit(tx, {
          ...auditContext(request),
          namespace,
          action: 'key.deleted',
          target: { kind: 'key', id: request.params.id },
          before: { name: gone.name, role: gone.role },
        });
        return bindAnswer(tx, reply, 204);
      });
      // Answered once no server's cache still knows the key (or its lease has ended: it reads through).
      await ctx.lease.settle();
      return sendBound(reply, body);
    },
  );
}
