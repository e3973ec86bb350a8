import {
  createSecret,
  deleteSecret,
  listSecrets,
  rotateSecret,
  rotateSecretKeys,
  secretKeyStatus,
} from '@maitento/store';
import type { FastifyInstance } from 'fastify';
import type { ServerContext } from '../internal/context.js';
import { emptyBodyIsEmptyObject } from '../internal/optional-body.js';
import { idParams, responses } from '../schemas/shared.js';

const value = { type: 'string', minLength: 1, maxLength: 65536 };

const keyStatus = {
  type: 'object',
  properties: {
    currentKeyId: { type: 'string' },
    secretsByKeyId: { type: 'object', additionalProperties: { type: 'integer' } },
    unusedPreviousKeyIds: { type: 'array', items: { type: 'string' } },
  },
  required: ['currentKeyId', 'secretsByKeyId', 'unusedPreviousKeyIds'],
};

/**
 * `/v1/secrets`: an admin creates, lists, rotates and deletes secrets; values go in, never out. `/v1/admin/secret-key`:
 * the operator sees which master keys the secrets are under and re-wraps them all under the current one.
 */
export async function secretRoutes(app: FastifyInstance, ctx: ServerContext): Promise<void> {
  app.post<{ Body: { name: string; value: string } }>(
    '/secrets',
    {
      config: { role: 'admin' },
      schema: {
        operationId: 'createSecret',
        tags: ['secrets'],
        summary: 'Create a secret (stored encrypted)',
        body: {
          type: 'object',
          properties: { name: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$' }, value },
          required: ['name', 'value'],
          additionalProperties: false,
        },
        response: responses({ 201: { $ref: 'Secret#' } }),
      },
    },
    async (request, reply) => {
      const secret = await createSecret(ctx.db, ctx.secretKey, request.identity.namespace, request.body);
      return reply.status(201).send(secret);
    },
  );

  app.get(
    '/secrets',
    {
      config: { role: 'admin' },
      schema: {
        operationId: 'listSecrets',
        tags: ['secrets'],
        summary: 'List the secrets by id and name',
        response: responses({ 200: { type: 'array', items: { $ref: 'Secret#' } } }),
      },
    },
    async (request) => listSecrets(ctx.db, request.identity.namespace),
  );

  app.put<{ Params: { id: string }; Body: { value: string } }>(
    '/secrets/:id',
    {
      config: { role: 'admin' },
      schema: {
        operationId: 'rotateSecret',
        tags: ['secrets'],
        summary: 'Rotate a secret: replace its value',
        params: idParams,
        body: { type: 'object', properties: { value }, required: ['value'], additionalProperties: false },
        response: responses({ 200: { $ref: 'Secret#' } }),
      },
    },
    async (request) => {
      const { namespace } = request.identity;
      const secret = await rotateSecret(ctx.db, ctx.secretKey, namespace, request.params.id, request.body.value);
      ctx.cache.changed({ kind: 'secret', namespace, id: request.params.id });
      return secret;
    },
  );

  app.delete<{ Params: { id: string } }>(
    '/secrets/:id',
    {
      config: { role: 'admin' },
      schema: {
        operationId: 'deleteSecret',
        tags: ['secrets'],
        summary: 'Delete a secret',
        params: idParams,
        response: responses({ 204: { type: 'null' } }),
      },
    },
    async (request, reply) => {
      await deleteSecret(ctx.db, request.identity.namespace, request.params.id);
      ctx.cache.changed({ kind: 'secret', namespace: request.identity.namespace, id: request.params.id });
      return reply.status(204).send();
    },
  );

  app.get(
    '/admin/secret-key',
    {
      config: { role: 'operator' },
      schema: {
        operationId: 'getSecretKeyStatus',
        tags: ['secrets'],
        summary: 'Which master key ids the secrets of every namespace are under',
        response: responses({ 200: keyStatus }),
      },
    },
    async () => secretKeyStatus(ctx.db, ctx.secretKey),
  );

  app.post<{ Body: { batchSize?: number } }>(
    '/admin/secret-key/rotate',
    {
      config: { role: 'operator' },
      preValidation: emptyBodyIsEmptyObject,
      schema: {
        operationId: 'rotateSecretKey',
        tags: ['secrets'],
        summary: "Re-wrap every secret's data key under the current master key (values untouched; resumable)",
        body: {
          type: 'object',
          properties: { batchSize: { type: 'integer', minimum: 1, maximum: 1000 } },
          additionalProperties: false,
        },
        response: responses({
          200: {
            type: 'object',
            properties: {
              keyId: { type: 'string' },
              rewrapped: { type: 'integer' },
              converted: { type: 'integer' },
              batches: { type: 'integer' },
              status: keyStatus,
            },
            required: ['keyId', 'rewrapped', 'converted', 'batches', 'status'],
          },
        }),
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
