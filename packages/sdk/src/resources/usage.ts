import type { Static } from 'typebox';
import type { RequestOptions } from '../client.js';
import type { QuotaStandingSchema, SetQuotasBodySchema, UsageQuerySchema, UsageReportSchema } from '../wire/audit.js';
import { APIResource } from './resource.js';

/** What the runs of a namespace spent over a period, grouped. */
export type UsageReport = Static<typeof UsageReportSchema>;
/** What `mt.usage.get` takes: the period and the grouping. */
export type UsageParams = Static<typeof UsageQuerySchema>;
/** A namespace's quotas (null: none) and the figures they are held to now (docs/quotas.md). */
export type QuotaStanding = Static<typeof QuotaStandingSchema>;
/** What `mt.namespaces.setQuotas` takes: every quota (one left out is none). */
export type SetQuotasParams = Static<typeof SetQuotasBodySchema>;

/** `mt.usage`: what the runs of the namespace spent (an admin key; docs/runs.md, "Usage and budgets"). */
export class Usage extends APIResource {
  /**
   * Runs, tool calls, tokens and cost of the runs created in [since, until), for the namespace or by interaction, key
   * or tool.
   */
  async get(params: UsageParams = {}, options?: RequestOptions): Promise<UsageReport> {
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(params)) if (value !== undefined) query.set(key, String(value));
    const text = query.toString();
    return this.client.request({ method: 'GET', path: `/v1/usage${text ? `?${text}` : ''}` }, options);
  }

  /** The namespace's quotas and what it used of them this UTC day and month. */
  async quotas(options?: RequestOptions): Promise<QuotaStanding> {
    return this.client.request({ method: 'GET', path: '/v1/quotas' }, options);
  }
}
