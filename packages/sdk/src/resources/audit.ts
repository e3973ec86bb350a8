import type { Static } from 'typebox';
import type { RequestOptions } from '../client.js';
import type { AuditEntrySchema, AuditPageSchema, ExportAuditQuerySchema, ListAuditQuerySchema } from '../wire/audit.js';
import { APIResource } from './resource.js';

/** One row of the audit log: who changed what, when, in which request (never a secret value). */
export type AuditEntry = Static<typeof AuditEntrySchema>;
/** One page of the audit log, newest first; `nextCursor` is null on the last one. */
export type AuditPage = Static<typeof AuditPageSchema>;
/** What `mt.audit.list` takes: filters, a page size and the cursor of the page before. */
export type ListAuditParams = Static<typeof ListAuditQuerySchema>;
/** What `mt.audit.exportJsonl` takes: the filters, without paging. */
export type ExportAuditParams = Static<typeof ExportAuditQuerySchema>;

function queryOf(route: string, params: ListAuditParams): string {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined) query.set(key, String(value));
  const text = query.toString();
  return `${route}${text ? `?${text}` : ''}`;
}

/** `mt.audit`: the audit log of the namespace (an admin key). */
export class Audit extends APIResource {
  /** One page of the audit log, newest first, filtered by actor, action (or its first part), target and time. */
  async list(params: ListAuditParams = {}, options?: RequestOptions): Promise<AuditPage> {
    return this.client.request({ method: 'GET', path: queryOf('/v1/audit', params) }, options);
  }

  /** Every matching row as JSON Lines (oldest first, one JSON object a line), as the server exports it. */
  async exportJsonl(params: ExportAuditParams = {}, options?: RequestOptions): Promise<string> {
    const response = await this.client.requestRaw(
      { method: 'GET', path: queryOf('/v1/audit/export', params), headers: { accept: 'application/jsonl' } },
      options,
    );
    return response.text();
  }
}
