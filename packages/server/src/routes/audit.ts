import { Readable } from 'node:stream';
import { ListAuditQuerySchema } from '@maitento/sdk';
import { AUDIT_MAX_PAGE, type AuditQuery, listAudit } from '@maitento/store';
import { operation } from '../openapi/operation.js';
import type { Api } from '../schemas/shared.js';
import type { ServerContext } from '../server/context.js';

/** The media type of the JSON Lines export (one JSON object a line). */
export const JSONL = 'application/jsonl';

/** `GET /v1/audit`: an admin reads its namespace's audit log, a page at a time or whole as JSON Lines. */
export async function auditRoutes(app: Api, ctx: ServerContext): Promise<void> {
  app.get(
    '/audit',
    {
      config: { role: 'admin' },
      schema: operation({
        operationId: 'listAudit',
        tags: ['audit'],
        summary: 'The audit log of the namespace, newest first (admin only); ?format=jsonl exports it as JSON Lines',
        description:
          'Lists the audit rows of the namespace, newest first: every change of state by a key, a console session ' +
          'or the system (deploys, keys, secrets, enable/disable, approvals, namespaces, console sign-ins, cancels, ' +
          'pruning, migrations), with who, what, the before/after summary (never a secret value) and the request id. ' +
          'Filtered by actor, action (or its first part), target and time; paged with nextCursor. With format=jsonl ' +
          'the answer is every matching row, oldest first, one JSON object a line (application/jsonl), unpaged.',
        querystring: ListAuditQuerySchema,
        response: {
          200: {
            description: 'One page of the audit log (JSON), or every matching row as JSON Lines (format=jsonl)',
            content: {
              'application/json': { schema: { $ref: 'AuditPage#' } },
              [JSONL]: {
                schema: { type: 'string', description: 'One AuditEntry as JSON a line, oldest first' },
                'x-line-schema': { $ref: 'AuditEntry#' },
              },
            },
          },
        },
        ok: 'One page of the audit log, or the export as JSON Lines',
        errors: ['api:audit:cursor-invalid', 'api:audit:time-invalid'],
        examples: {
          oks: {
            [JSONL]:
              '{"id":"1041","at":"2026-03-14T09:26:50.112Z","namespace":"default","actor":{"kind":"key","id":"c91d4e7a-2f3b-4a5c-8d6e-1f0a9b8c7d65","role":"admin","via":"api"},"action":"secret.created","target":{"kind":"secret","id":"5e8a1f3c-9b2d-4c7e-a6f0-3d1b2c4e5f78"},"before":null,"after":{"name":"orders-key"},"requestId":"0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"}\n',
          },
        },
      }),
    },
    async (request, reply) => {
      const { format, cursor, limit, ...filters } = request.query;
      const namespace = request.identity.namespace;
      if (format !== 'jsonl') return listAudit(ctx.db, namespace, { ...filters, cursor, limit });
      // Every matching row, read 1000 a query (newest first, as the pages) and written oldest first: the lines are
      // held until the last page is read (docs/audit.md: narrow a large export with since and until).
      const pages: string[][] = [];
      let next: string | undefined;
      for (;;) {
        const query: AuditQuery = { ...filters, limit: AUDIT_MAX_PAGE, ...(next ? { cursor: next } : {}) };
        const page = await listAudit(ctx.db, namespace, query);
        pages.push(page.entries.map((entry) => `${JSON.stringify(entry)}\n`));
        if (page.nextCursor === null) break;
        next = page.nextCursor;
      }
      const lines = pages.flat().reverse();
      return reply.type(JSONL).send(Readable.from(lines));
    },
  );
}
