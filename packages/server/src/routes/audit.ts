import { Readable } from 'node:stream';
import { ExportAuditQuerySchema, ListAuditQuerySchema, UsageQuerySchema } from '@maitento/sdk';
import { AUDIT_MAX_PAGE, listAudit, quotaStanding, usageFigures } from '@maitento/store';
import { operation } from '../openapi/operation.js';
import type { Api } from '../schemas/shared.js';
import type { ServerContext } from '../server/context.js';
import { standingView } from './namespaces.js';

/** The media type of the JSON Lines export (one JSON object a line). */
export const JSONL = 'application/jsonl';

const FILTERS =
  'Filtered by actor (a key id, person:<id>, or system), action (or its first part: secret gives every secret.* row), target ' +
  '(an id or name, or kind:id) and time (since inclusive, until exclusive, ISO 8601).';

/** `/v1/audit`: an admin reads its namespace's audit log, a page at a time, or exports it as JSON Lines. */
export async function auditRoutes(app: Api, ctx: ServerContext): Promise<void> {
  app.get(
    '/audit',
    {
      config: { role: 'admin' },
      schema: operation({
        operationId: 'listAudit',
        tags: ['audit'],
        summary: 'The audit log of the namespace, newest first, a page at a time (admin only)',
        description:
          'Lists the audit rows of the namespace, newest first: every change of state by a key, a console session ' +
          'or the system (deploys, keys, secrets, enable/disable, approvals, namespaces, console sign-ins, cancels, ' +
          'pruning, migrations), with who, what, the before/after summary (never a secret value) and the request id. ' +
          `${FILTERS} Paged: pass nextCursor back as cursor.`,
        querystring: ListAuditQuerySchema,
        response: { 200: { $ref: 'AuditPage#' } },
        ok: 'One page of the audit log and the cursor of the next',
        errors: ['api:audit:cursor-invalid', 'api:audit:time-invalid'],
      }),
    },
    async (request) => listAudit(ctx.db, request.identity.namespace, request.query),
  );

  app.get(
    '/usage',
    {
      config: { role: 'admin' },
      schema: operation({
        operationId: 'getUsage',
        tags: ['audit'],
        summary: 'What the runs of the namespace spent over a period: runs, tool calls, tokens and cost (admin only)',
        description:
          'Adds up the runs of the namespace created in [since, until) (both optional, ISO 8601): how many runs, ' +
          'tool calls (with a stored result), input and output tokens, and cost in US dollars by the price table ' +
          'the runs ran under (MT_MODEL_PRICES). One group for the namespace, or one per interaction (by=interaction), ' +
          'per key that started the runs (by=key; null for runs no key started), or per tool (by=tool: the calls by ' +
          "the tool's name, the runs that called it; tokens and cost are 0, being the model's). A call a namespace " +
          'quota refused is not counted (it was not made). Docs: runs.md, Usage and budgets.',
        querystring: UsageQuerySchema,
        response: { 200: { $ref: 'UsageReport#' } },
        ok: 'The figures, one entry per group',
        errors: ['api:audit:time-invalid'],
      }),
    },
    async (request) => {
      const { since, until, by } = request.query;
      const groups = await usageFigures(ctx.db, request.identity.namespace, { since, until, by });
      return { since: since ?? null, until: until ?? null, by: by ?? 'namespace', groups };
    },
  );

  app.get(
    '/quotas',
    {
      config: { role: 'admin' },
      schema: operation({
        operationId: 'getQuotas',
        tags: ['audit'],
        summary: "The namespace's quotas and what it used of them (admin only)",
        description:
          'The quotas the operator set on this namespace (null: none; PUT /v1/namespaces/{name}/quotas) and the ' +
          'figures they are held to now: GET /v1/usage over the current UTC day (runs, tool calls) and UTC month ' +
          '(tokens), with when each period ends. Docs: quotas.md.',
        response: { 200: { $ref: 'QuotaStanding#' } },
        ok: 'The quotas and the figures',
        errors: [],
      }),
    },
    async (request) =>
      standingView(request.identity.namespace, await quotaStanding(ctx.db, request.identity.namespace)),
  );

  app.get(
    '/audit/export',
    {
      config: { role: 'admin' },
      schema: operation({
        operationId: 'exportAudit',
        tags: ['audit'],
        summary: 'Every matching row of the audit log as JSON Lines, oldest first (admin only)',
        description:
          'Exports the audit rows of the namespace that match the filters, oldest first, one AuditEntry as JSON a ' +
          `line (application/jsonl), unpaged: parsing the lines gives the rows GET /v1/audit lists. ${FILTERS}`,
        querystring: ExportAuditQuerySchema,
        response: {
          200: {
            description: 'Every matching row, oldest first, one AuditEntry as JSON a line',
            content: {
              [JSONL]: {
                schema: { type: 'string', description: 'One AuditEntry as JSON a line, oldest first' },
                'x-line-schema': { $ref: 'AuditEntry#' },
              },
            },
          },
        },
        ok: 'The matching audit rows as JSON Lines',
        errors: ['api:audit:time-invalid'],
        examples: {
          oks: {
            [JSONL]:
              '{"id":"1041","at":"2026-03-14T09:26:50.112Z","namespace":"default","actor":{"kind":"key","id":"c91d4e7a-2f3b-4a5c-8d6e-1f0a9b8c7d65","role":"admin","via":"api"},"action":"secret.created","target":{"kind":"secret","id":"5e8a1f3c-9b2d-4c7e-a6f0-3d1b2c4e5f78"},"before":null,"after":{"name":"orders-key"},"requestId":"0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"}\n',
          },
        },
      }),
    },
    async (request, reply) => {
      const namespace = request.identity.namespace;
      // Every matching row, read 1000 a query (newest first, as the pages) and written oldest first: the lines are
      // held until the last page is read (docs/audit.md: narrow a large export with since and until).
      const pages: string[][] = [];
      let cursor: string | undefined;
      for (;;) {
        const page = await listAudit(ctx.db, namespace, { ...request.query, limit: AUDIT_MAX_PAGE, cursor });
        pages.push(page.entries.map((entry) => `${JSON.stringify(entry)}\n`));
        if (page.nextCursor === null) break;
        cursor = page.nextCursor;
      }
      return reply.type(JSONL).send(Readable.from(pages.flat().reverse()));
    },
  );
}
