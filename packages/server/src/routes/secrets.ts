import {
  CreateSecretBodySchema,
  IdParamsSchema,
  RotateSecretBodySchema,
  RotateSecretKeyBodySchema,
} from '@maitento/sdk';
import {
  createSecret,
  deleteSecret,
  listSecrets,
  recordAudit,
  rotateSecret,
  rotateSecretKeys,
  secretKeyStatus,
} from '@maitento/store';
import { auditContext } from '../http/actor.js';
import { emptyBodyIsEmptyObject } from '../http/optional-body.js';
import { operation } from '../openapi/operation.js';
import type { Api } from '../schemas/shared.js';
import type { ServerContext } from '../server/context.js';
import { bindAnswer, sendBound } from '../plugins/idempotency.js';

/**
 * `/v1/secrets`: an admin creates, lists, rotates and deletes secrets; values go in, never out. `/v1/admin/secret-key`:
 * the operator sees which master keys the secrets are under and re-wraps them all under the current one.
 */
export async function secretRoutes(app: Api, ctx: ServerContext): Promise<void> {
  app.post(
    '/secrets',
    {
      config: { role: 'admin' },
      schema: operation({
        operationId: 'createSecret',
        tags: ['secrets'],
        summary: 'Create a secret (stored encrypted)',
        description:
          'Stores a secret of the namespace (encrypted under the master key) for tools to send as a credential. The ' +
          'value is never answered again, by any operation.',
        body: CreateSecretBodySchema,
        response: { 201: { $ref: 'Secret#' } },
        ok: 'The secret, by id and name (never its value)',
        errors: ['api:secrets:exists'],
        examples: { body: { name: 'orders-key', value: 'replace-with-the-orders-api-key' } },
      }),
    },
    async (request, reply) => {
      // In a transaction of its own: a lost COMMIT answer is settled (decision 0101); the answer commits with the
      // request's Idempotency-Key (decision 0102) and its audit row.
      const { namespace } = request.identity;
      const body = await ctx.db.transaction(async (tx) => {
        const made = await createSecret(tx, ctx.secretKey, namespace, request.body);
        // By id and name only: never the value (docs/audit.md).
        await recordAudit(tx, {
          ...auditContext(request),
          namespace,
          action: 'secret.created',
          target: { kind: 'secret', id: made.id },
          after: { name: made.name },
        });
        return bindAnswer(tx, reply, 201, made);
      });
      return sendBound(reply, body);
    },
  );

  app.get(
    '/secrets',
    {
      config: { role: 'admin' },
      schema: operation({
        operationId: 'listSecrets',
        tags: ['secrets'],
        summary: 'List the secrets by id and name',
        description: 'Lists the secrets of the namespace by id and name, with when each was created and last rotated.',
        response: { 200: { type: 'array', items: { $ref: 'Secret#' } } },
        ok: 'The secrets (never their values)',
        errors: [],
      }),
    },
    async (request) => listSecrets(ctx.db, request.identity.namespace),
  );

  app.put(
    '/secrets/:id',
    {
      config: { role: 'admin' },
      schema: operation({
        operationId: 'rotateSecret',
        tags: ['secrets'],
        summary: 'Rotate a secret: replace its value',
        description: "Replaces a secret's value; the next call that uses it sends the new one.",
        params: IdParamsSchema,
        body: RotateSecretBodySchema,
        response: { 200: { $ref: 'Secret#' } },
        ok: 'The secret, with its new updatedAt',
        errors: ['api:secrets:not-found'],
        examples: { body: { value: 'replace-with-the-new-orders-api-key' } },
      }),
    },
    async (request) => {
      const { namespace } = request.identity;
      const secret = await ctx.db.transaction(async (tx) => {
        const rotated = await rotateSecret(tx, ctx.secretKey, namespace, request.params.id, request.body.value);
        await recordAudit(tx, {
          ...auditContext(request),
          namespace,
          action: 'secret.rotated',
          target: { kind: 'secret', id: rotated.id },
          after: { name: rotated.name, updatedAt: rotated.updatedAt },
        });
        return rotated;
      });
      // Answered once no server's cache still holds the old value (or its lease has ended: it reads through).
      await ctx.lease.settle();
      return secret;
    },
  );

  app.delete(
    '/secrets/:id',
    {
      config: { role: 'admin' },
      schema: operation({
        operationId: 'deleteSecret',
        tags: ['secrets'],
        summary: 'Delete a secret',
        description: 'Deletes a secret; calls that need it then fail until one of that name is created again.',
        params: IdParamsSchema,
        response: { 204: { type: 'null' } },
        ok: 'The secret was deleted',
        errors: ['api:secrets:not-found'],
      }),
    },
    async (request, reply) => {
      const { namespace } = request.identity;
      await ctx.db.transaction(async (tx) => {
        const gone = await deleteSecret(tx, namespace, request.params.id);
        await recordAudit(tx, {
          ...auditContext(request),
          namespace,
          action: 'secret.deleted',
          target: { kind: 'secret', id: request.params.id },
          before: { name: gone.name },
        });
      });
      await ctx.lease.settle();
      return reply.status(204).send();
    },
  );

  app.get(
    '/admin/secret-key',
    {
      config: { role: 'operator' },
      schema: operation({
        operationId: 'getSecretKeyStatus',
        tags: ['secrets'],
        summary: 'Which master key ids the secrets of every namespace are under',
        description:
          'Tells the operator which master key ids the secrets of every namespace are encrypted under, and which ' +
          'previous keys no secret uses any more (safe to remove from MT_SECRET_KEY).',
        response: { 200: { $ref: 'SecretKeyStatus#' } },
        ok: 'How many secrets each master key id holds',
        errors: [],
      }),
    },
    async () => secretKeyStatus(ctx.db, ctx.secretKey),
  );

  app.post(
    '/admin/secret-key/rotate',
    {
      config: { role: 'operator' },
      preValidation: emptyBodyIsEmptyObject,
      schema: operation({
        operationId: 'rotateSecretKey',
        tags: ['secrets'],
        summary: "Re-wrap every secret's data key under the current master key (values untouched; resumable)",
        description:
          "Re-wraps every secret's data key under the current master key, in batches; values are not decrypted. " +
          'Resumable: run it again after an interruption.',
        body: RotateSecretKeyBodySchema,
        response: { 200: { $ref: 'SecretKeyRotation#' } },
        ok: 'How many secrets were re-wrapped, and the status after',
        errors: ['api:secrets:decrypt-failed', 'api:secrets:key-id-missing'],
        examples: { body: { batchSize: 100 } },
      }),
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
