import { CreateNamespaceBodySchema, NamespaceParamsSchema, SetQuotasBodySchema } from '@maitento/sdk';
import {
  createApiKey,
  createNamespace,
  type QuotaStanding,
  quotaStanding,
  recordAudit,
  setNamespaceQuotas,
  storeErrors,
} from '@maitento/store';
import { auditContext } from '../http/actor.js';
import { operation } from '../openapi/operation.js';
import type { Api } from '../schemas/shared.js';
import type { ServerContext } from '../server/context.js';

/** A namespace's quotas and figures as the API shows them. */
export function standingView(namespace: string, standing: QuotaStanding) {
  const { quotas, used, dayEndsAt, monthEndsAt } = standing;
  return { namespace, quotas, used, dayEndsAt, monthEndsAt };
}

const QUOTAS_DOC =
  'Quotas per namespace (docs/quotas.md): runs a UTC day, tool calls a UTC day, model tokens a UTC month, ' +
  'held to the figures of GET /v1/usage over the period. Over one, a run start answers 429 api:quota:* with ' +
  "Retry-After (the period's end), a run's tool call fails with a message the model reads, and a run spends no " +
  'more tokens (it fails before its next model turn).';

/**
 * `POST /v1/namespaces`: the operator creates a namespace and gets its first admin key; `PUT|GET
 * /v1/namespaces/{name}/quotas`: the operator sets and reads its quotas (decision 0345).
 */
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

  app.put(
    '/namespaces/:name/quotas',
    {
      config: { role: 'operator' },
      schema: operation({
        operationId: 'setNamespaceQuotas',
        tags: ['namespaces'],
        summary: "Set a namespace's quotas (operator only)",
        description: `Sets every quota of the namespace at once: one left out or null is no quota. ${QUOTAS_DOC} A quota lowered below what is already used refuses from the next start, call or turn; nothing that ran is undone.`,
        params: NamespaceParamsSchema,
        body: SetQuotasBodySchema,
        response: { 200: { $ref: 'QuotaStanding#' } },
        ok: 'The quotas as set, and the figures they are held to now',
        errors: ['api:namespaces:not-found'],
        examples: { body: { runsPerDay: 1000, toolCallsPerDay: 20000, tokensPerMonth: 50000000 } },
      }),
    },
    async (request) => {
      const { name } = request.params;
      const quotas = {
        runsPerDay: request.body.runsPerDay ?? null,
        toolCallsPerDay: request.body.toolCallsPerDay ?? null,
        tokensPerMonth: request.body.tokensPerMonth ?? null,
      };
      await ctx.db.transaction(async (tx) => {
        const before = await setNamespaceQuotas(tx, name, quotas);
        // In the operator's namespace, as namespace.created.
        await recordAudit(tx, {
          ...auditContext(request),
          namespace: request.identity.namespace,
          action: 'namespace.quotas-set',
          target: { kind: 'namespace', id: name },
          before: { ...before },
          after: { ...quotas },
        });
      });
      return standingView(name, await quotaStanding(ctx.db, name));
    },
  );

  app.get(
    '/namespaces/:name/quotas',
    {
      config: { role: 'operator' },
      schema: operation({
        operationId: 'getNamespaceQuotas',
        tags: ['namespaces'],
        summary: "A namespace's quotas and what it used of them (operator only)",
        description: `${QUOTAS_DOC} An admin of the namespace reads its own with GET /v1/quotas.`,
        params: NamespaceParamsSchema,
        response: { 200: { $ref: 'QuotaStanding#' } },
        ok: 'The quotas (null: none) and the figures they are held to now',
        errors: ['api:namespaces:not-found'],
      }),
    },
    async (request) => {
      const { name } = request.params;
      const { rows } = await ctx.db.query('SELECT 1 FROM mt_namespaces WHERE name = $1', [name]);
      if (rows.length === 0) throw storeErrors.create('api:namespaces:not-found', { name });
      return standingView(name, await quotaStanding(ctx.db, name));
    },
  );
}
