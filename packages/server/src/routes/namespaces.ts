import { CreateNamespaceBodySchema } from '@maitento/sdk';
import { createApiKey, createNamespace, recordAudit } from '@maitento/store';
import { auditContext } from '../http/actor.js';
import { operation } from '../openapi/operation.js';
import type { Api } from '../schemas/shared.js';
import type { ServerContext } from '../server/context.js';

/** `POST /v1/namespaces`: the operator creates a namespace and gets its first admin key. */
export async function namespaceRoutes(app: Api, ctx: ServerContext): Promise<void> {
  app.post(
    '/namespaces',
    {
      config: { role: 'operator' },
      schema: operation({
        operationId: 'createNamespace',
        tags: ['namespaces'],
        summary: 'Create a namespace and its first admin key (operator only)',
        description:
          'Creates a namespace (its own connectors, tools, agents, interactions, secrets and keys) and its first admin ' +
          'key, shown in this answer only. Needs an admin key of the default namespace (the operator).',
        body: CreateNamespaceBodySchema,
        response: { 201: { $ref: 'CreatedNamespace#' } },
        ok: 'The namespace and its first admin key (shown once: keep it)',
        errors: ['api:namespaces:exists'],
        examples: { body: { name: 'support' } },
      }),
    },
    async (request, reply) => {
      const created = await ctx.db.transaction(async (tx) => {
        const namespace = await createNamespace(tx, request.body.name);
        const key = await createApiKey(tx, namespace.name, { role: 'admin', name: 'first admin' });
        // In the operator's namespace (its key made it); the new namespace's log starts with its own changes.
        await recordAudit(tx, {
          ...auditContext(request),
          namespace: request.identity.namespace,
          action: 'namespace.created',
          target: { kind: 'namespace', id: namespace.name },
          after: { firstAdminKeyId: key.id },
        });
        return { name: namespace.name, key: { id: key.id, key: key.key, role: key.role } };
      });
      return reply.status(201).send(created);
    },
  );
}
