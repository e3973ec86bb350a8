import {
  createSecret,
  deleteSecret,
  listSecrets,
  rotateSecret,
  rotateSecretKeys,
  secretKeyStatus,
} from '@maitento/store';
import type { OperationRequest } from '@maitento/sdk';
import type { FastifyInstance } from 'fastify';
import type { ServerContext } from '../internal/context.js';
import { emptyBodyIsEmptyObject } from '../internal/optional-body.js';
import { bindAnswer, sendBound } from '../plugins/idempotency.js';
import { operation, responses } from '../schemas/shared.js';

/**
 * `/v1/secrets`: an admin creates, lists, rotates and deletes secrets; values go in, never out. `/v1/admin/secret-key`:
 * the operator sees which master keys the secrets are under and re-wraps them all under the current one.
 */
export async function secretRoutes(app: FastifyInstance, ctx: ServerContext): Promise<void> {
  app.post<OperationRequest<'createSecret'>>(
    '/secrets',
    {
      config: { role: 'admin' },
      schema: {
        ...operation('createSecret'),
        tags: ['secrets'],
        summary: 'Create a secret (stored encrypted)',
        response: responses({ 201: { $ref: 'Secret#' } }),
      },
    },
    async (request, reply) => {
      // In a transaction of its own: a lost COMMIT answer is settled (decision 0101); the answer commits with the
      // request's Idempotency-Key (decision 0102).
      const body = await ctx.db.transaction(async (tx) =>
        bindAnswer(tx, reply, 201, await createSecret(tx, ctx.secretKey, request.identity.namespace, request.body)),
      );
      return sendBound(reply, body);
    },
  );

  app.get(
    '/secrets',
    {
      config: { role: 'admin' },
      schema: {
        ...operation('listSecrets'),
        tags: ['secrets'],
        summary: 'List the secrets by id and name',
        response: responses({ 200: { type: 'array', items: { $ref: 'Secret#' } } }),
      },
    },
    async (request) => listSecrets(ctx.db, request.identity.namespace),
  );

  app.put<OperationRequest<'rotateSecret'>>(
    '/secrets/:id',
    {
      config: { role: 'admin' },
      schema: {
        ...operation('rotateSecret'),
        tags: ['secrets'],
        summary: 'Rotate a secret: replace its value',
        response: responses({ 200: { $ref: 'Secret#' } }),
      },
    },
    async (request) => {
      const { namespace } = request.identity;
      const secret = await rotateSecret(ctx.db, ctx.secretKey, namespace, request.params.id, request.body.value);
      // Answered once no server's cache still holds the old value (or its lease has ended: it reads through).
      await ctx.lease.settle();
      return secret;
    },
  );

  app.delete<OperationRequest<'deleteSecret'>>(
    '/secrets/:id',
    {
      config: { role: 'admin' },
      schema: {
        ...operation('deleteSecret'),
        tags: ['secrets'],
        summary: 'Delete a secret',
        response: responses({ 204: { type: 'null' } }),
      },
    },
    async (request, reply) => {
      await deleteSecret(ctx.db, request.identity.namespace, request.params.id);
      await ctx.lease.settle();
      return reply.status(204).send();
    },
  );

  app.get(
    '/admin/secret-key',
    {
      config: { role: 'operator' },
      schema: {
        ...operation('getSecretKeyStatus'),
        tags: ['secrets'],
        summary: 'Which master key ids the secrets of every namespace are under',
        response: responses({ 200: { $ref: 'SecretKeyStatus#' } }),
      },
    },
    async () => secretKeyStatus(ctx.db, ctx.secretKey),
  );

  app.post<OperationRequest<'rotateSecretKey'>>(
    '/admin/secret-key/rotate',
    {
      config: { role: 'operator' },
      preValidation: emptyBodyIsEmptyObject,
      schema: {
        ...operation('rotateSecretKey'),
        tags: ['secrets'],
        summary: "Re-wrap every secret's data key under the current master key (values untouched; resumable)",
        response: responses({ 200: { $ref: 'SecretKeyRotation#' } }),
      },
    },
    async (request) => {
      const rotation = await rotateSecretKeys(ctx.db, ctx.secretKey, {
        batchSize: request.body.batchSize,
        afterBatch: (done) => request.log.info({ secretKeyRotation: done }, 'secret key rotation: batch committed'),
      });
      return { ...rotation, status: await secretKeyStatus(ctx.db, ctx.secretKey) };
    },
  );
}
