import {
  listApiKeys,
  type QuotaStanding,
  quotaStanding,
  type UsageGroup,
  type UsageGrouping,
  usageFigures,
} from '@maitento/store';
import { accessRefusal } from '../plugins/auth.js';
import type { ServerContext } from '../server/context.js';
import type { PageKit } from './automation-routes.js';
import { DataTable } from './table.js';
import { usd } from './timeline.js';
import { type Chrome, Layout, page } from './views.js';
import type { FastifyInstance } from 'fastify';
import type { ComponentChildren } from 'preact';

// The console's usage page (decision 0395): what the namespace's runs spent over a period, by interaction, tool and
// key (GET /v1/usage's figures, from the same store function), and its quotas with how much of each is used.

/** The periods the page's filter offers: the current UTC day, the current UTC month, or a range of UTC days. */
export type UsagePeriodName = 'today' | 'month' | 'range';

/** A period as the page shows it and GET /v1/usage takes it: [since, until), ISO 8601. */
export interface UsagePeriod {
  name: UsagePeriodName;
  since: string;
  until: string;
  /** The range's first and last days (both included, UTC), as the form shows them. */
  from: string;
  to: string;
}

const DAY_MS = 24 * 60 * 60 * 1000;
const DAY = /^\d{4}-\d{2}-\d{2}$/;

function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

function dayStart(value: string | undefined): number | undefined {
  const v = value?.trim();
  if (!v || !DAY.test(v)) return undefined;
  const ms = Date.parse(`${v}T00:00:00Z`);
  return Number.isFinite(ms) && dayOf(ms) === v ? ms : undefined;
}

/**
 * The period of the page's query (`?period=today`, `?period=month`, `?period=range&from=2026-12-01&to=2026-12-06`) at
 * `now`; an `error` when a range's days are missing, not days, or in the wrong order (the page then shows no figures).
 */
export function usagePeriod(
  query: { period?: string; from?: string; to?: string },
  now: number,
): { period: UsagePeriod; error?: string } {
  const today = Date.parse(`${dayOf(now)}T00:00:00Z`);
  const d = new Date(now);
  const monthStart = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  const monthEnd = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  const iso = (ms: number) => new Date(ms).toISOString();
  if (query.period === 'month') {
    const period = { name: 'month' as const, since: iso(monthStart), until: iso(monthEnd) };
    return { period: { ...period, from: dayOf(monthStart), to: dayOf(monthEnd - DAY_MS) } };
  }
  if (query.period === 'range') {
    const from = dayStart(query.from);
    const to = dayStart(query.to);
    const shown = { from: query.from?.trim() ?? '', to: query.to?.trim() ?? '' };
    if (from === undefined || to === undefined || to < from) {
      return {
        period: { name: 'range', since: iso(today), until: iso(today + DAY_MS), ...shown },
        error:
          from === undefined || to === undefined
            ? 'Give the first and the last day of the range, as YYYY-MM-DD.'
            : 'The last day of the range is before its first.',
      };
    }
    return { period: { name: 'range', since: iso(from), until: iso(to + DAY_MS), ...shown } };
  }
  return {
    period: { name: 'today', since: iso(today), until: iso(today + DAY_MS), from: dayOf(today), to: dayOf(today) },
  };
}

const count = (n: number) => n.toLocaleString('en');

/** The runs list filtered to the period's runs (its filters are UTC minutes) and `more`. */
function runsLink(period: UsagePeriod, more: Record<string, string> = {}): string {
  const minute = (iso: string) => iso.slice(0, 16);
  return `/console/runs?${new URLSearchParams({ ...more, since: minute(period.since), until: minute(period.until) })}`;
}

/** One grouping's table: a row per group, its figures as text with the exact value in `data-value`. */
function UsageTable(props: {
  by: Exclude<UsageGrouping, 'namespace'>;
  groups: UsageGroup[];
  caption: string;
  label: (group: UsageGroup) => ComponentChildren;
  /** Where a group's runs are listed (the runs list filtered to them), when it can be. */
  runsHref?: (group: UsageGroup) => string | undefined;
}) {
  const model = props.by !== 'tool';
  const head = { interaction: 'Interaction', tool: 'Tool', key: 'Key' }[props.by];
  return (
    <DataTable
      id={`usage-${props.by}`}
      caption={props.caption}
      columns={[head, 'Runs', 'Tool calls', ...(model ? ['Tokens in', 'Tokens out', 'Cost'] : [])]}
      rows={props.groups}
      row={(g) => (
        <tr data-key={g.key ?? ''}>
          <th scope="row">{props.label(g)}</th>
          <td data-field="runs" data-value={String(g.runs)}>
            {props.runsHref?.(g) ? <a href={props.runsHref(g)}>{count(g.runs)}</a> : count(g.runs)}
          </td>
          <td data-field="toolCalls" data-value={String(g.toolCalls)}>
            {count(g.toolCalls)}
          </td>
          {model ? (
            <>
              <td data-field="inputTokens" data-value={String(g.inputTokens)}>
                {count(g.inputTokens)}
              </td>
              <td data-field="outputTokens" data-value={String(g.outputTokens)}>
                {count(g.outputTokens)}
              </td>
              <td data-field="costUsd" data-value={String(g.costUsd)}>
                {usd(g.costUsd)}
              </td>
            </>
          ) : null}
        </tr>
      )}
    />
  );
}

/** A quota's bar: how much of it is used, the figure always beside it as text (never colour alone). */
function QuotaBar(props: { id: string; label: string; used: number; quota: number | null; unit: string }) {
  const { used, quota } = props;
  const share = quota === null ? undefined : quota === 0 ? (used > 0 ? 100 : 0) : (used / quota) * 100;
  const reached = quota !== null && used >= quota;
  const text =
    quota === null
      ? `${count(used)} ${props.unit}; no quota`
      : `${count(used)} of ${count(quota)} ${props.unit} (${Math.floor(share ?? 0)} %)${reached ? ', quota reached' : ''}`;
  return (
    <li id={props.id} data-used={String(used)} data-quota={quota === null ? '' : String(quota)}>
      <span>{props.label}</span>
      {share === undefined ? (
        <span />
      ) : (
        <svg class="bar-svg" viewBox="0 0 100 10" preserveAspectRatio="none" aria-hidden="true">
          <rect class="bar-track" x={0} y={0} width={100} height={10} />
          <rect
            class={reached ? 'c-Failed' : 'c-value'}
            x={0}
            y={0}
            width={Math.min(100, Math.max(0.5, share))}
            height={10}
          />
        </svg>
      )}
      <span class="bar-text">{text}</span>
    </li>
  );
}

/** The usage page. */
export function UsagePage(props: {
  chrome: Chrome;
  period: UsagePeriod;
  error?: string;
  figures?: { total: UsageGroup | undefined; interaction: UsageGroup[]; tool: UsageGroup[]; key: UsageGroup[] };
  keyNames: Map<string, string | null>;
  standing: QuotaStanding;
}) {
  const { period, figures, standing } = props;
  const { quotas, used } = standing;
  const radio = (name: UsagePeriodName, label: string) => (
    <label class="choice">
      <input type="radio" name="period" value={name} checked={period.name === name} /> {label}
    </label>
  );
  const total = figures?.total ?? { key: null, runs: 0, toolCalls: 0, inputTokens: 0, outputTokens: 0, costUsd: 0 };
  const last = dayOf(Date.parse(period.until) - DAY_MS);
  return (
    <Layout title="Usage" chrome={props.chrome}>
      <h1>Usage</h1>
      <p>
        What the runs of {props.chrome.namespace} spent, counted by the run's start (UTC), with the figures of{' '}
        <code>GET /v1/usage</code>; and the namespace's quotas.
      </p>
      <form method="get" action="/console/usage" class="usage-filter">
        <fieldset>
          <legend>Period</legend>
          {radio('today', 'Today')}
          {radio('month', 'This month')}
          {radio('range', 'From a day to a day')}
          <div class="filters">
            <div>
              <label for="from">First day (UTC)</label>
              <input
                id="from"
                name="from"
                type="date"
                value={period.from}
                aria-invalid={props.error ? 'true' : undefined}
                aria-describedby={props.error ? 'usage-error' : undefined}
              />
            </div>
            <div>
              <label for="to">Last day (UTC, included)</label>
              <input
                id="to"
                name="to"
                type="date"
                value={period.to}
                aria-invalid={props.error ? 'true' : undefined}
                aria-describedby={props.error ? 'usage-error' : undefined}
              />
            </div>
          </div>
          <p class="muted">The days count for "From a day to a day" only.</p>
        </fieldset>
        <button type="submit">Show</button>
      </form>
      {props.error ? (
        <p id="usage-error" role="alert" class="error">
          {props.error}
        </p>
      ) : null}
      {figures ? (
        <section aria-labelledby="usage-period">
          <h2 id="usage-period" data-since={period.since} data-until={period.until}>
            {period.from === last ? `On ${period.from}` : `From ${period.from} to ${last}`}
          </h2>
          <p id="usage-total" data-runs={String(total.runs)} data-tool-calls={String(total.toolCalls)}>
            <a href={runsLink(period)}>
              {count(total.runs)} {total.runs === 1 ? 'run' : 'runs'}
            </a>
            , {count(total.toolCalls)} tool {total.toolCalls === 1 ? 'call' : 'calls'}, {count(total.inputTokens)}{' '}
            tokens in and {count(total.outputTokens)} out, {usd(total.costUsd)}.
          </p>
          {figures.interaction.length === 0 ? (
            <p>No run started in this period.</p>
          ) : (
            <>
              <UsageTable
                by="interaction"
                groups={figures.interaction}
                caption="By interaction"
                runsHref={(g) => (g.key === null ? undefined : runsLink(period, { interaction: g.key }))}
                label={(g) =>
                  g.key === null ? '(none)' : <a href={`/console/interactions/${encodeURIComponent(g.key)}`}>{g.key}</a>
                }
              />
              {figures.tool.length === 0 ? (
                <p>No tool was called in this period.</p>
              ) : (
                <UsageTable
                  by="tool"
                  groups={figures.tool}
                  caption="By tool (runs: the runs that called it; tokens and cost are the model's, by interaction and key)"
                  label={(g) =>
                    g.key === null ? '(none)' : <a href={`/console/tools/${encodeURIComponent(g.key)}`}>{g.key}</a>
                  }
                />
              )}
              <UsageTable
                by="key"
                groups={figures.key}
                caption="By the key that started the runs"
                label={(g) => {
                  if (g.key === null) return 'No key (schedules, triggers)';
                  const name = props.keyNames.get(g.key);
                  return (
                    <>
                      {name ?? 'unnamed'} <code>{g.key.slice(0, 8)}</code>
                    </>
                  );
                }}
              />
            </>
          )}
        </section>
      ) : null}
      <section aria-labelledby="usage-quotas">
        <h2 id="usage-quotas">Quotas</h2>
        <p>
          Set by the operator (<code>PUT /v1/namespaces/{props.chrome.namespace}/quotas</code>); runs and tool calls
          count over the current UTC day, which ends {standing.dayEndsAt.slice(0, 16).replace('T', ' ')} UTC, and tokens
          over the current UTC month, which ends {standing.monthEndsAt.slice(0, 10)}, whatever period is shown above.
        </p>
        <ul class="bar-list" id="quota-bars">
          <QuotaBar id="quota-runs" label="Runs today" used={used.runsToday} quota={quotas.runsPerDay} unit="runs" />
          <QuotaBar
            id="quota-tool-calls"
            label="Tool calls today"
            used={used.toolCallsToday}
            quota={quotas.toolCallsPerDay}
            unit="tool calls"
          />
          <QuotaBar
            id="quota-tokens"
            label="Tokens this month"
            used={used.tokensThisMonth}
            quota={quotas.tokensPerMonth}
            unit="tokens"
          />
        </ul>
      </section>
    </Layout>
  );
}

/** `/console/usage`: an admin's, as GET /v1/usage and GET /v1/quotas are (docs/roles.md). */
export function usageRoutes(app: FastifyInstance, ctx: ServerContext, kit: PageKit): void {
  const { chrome, html } = kit;
  app.get<{ Querystring: { period?: string; from?: string; to?: string } }>(
    '/console/usage',
    async (request, reply) => {
      const refused = accessRefusal(request.identity, 'admin');
      if (refused !== undefined) throw refused;
      const namespace = request.identity.namespace;
      const { period, error } = usagePeriod(request.query, Date.now());
      const range = { since: period.since, until: period.until };
      const [standing, keys, figures] = await Promise.all([
        quotaStanding(ctx.db, namespace),
        listApiKeys(ctx.db, namespace),
        error
          ? undefined
          : Promise.all(
              (['namespace', 'interaction', 'tool', 'key'] as const).map((by) =>
                usageFigures(ctx.db, namespace, { ...range, by }),
              ),
            ),
      ]);
      const shown = figures
        ? { total: figures[0][0], interaction: figures[1], tool: figures[2], key: figures[3] }
        : undefined;
      return html(
        reply,
        page(
          <UsagePage
            chrome={await chrome(request, 'usage')}
            period={period}
            error={error}
            figures={shown}
            keyNames={new Map(keys.map((k) => [k.id, k.name]))}
            standing={standing}
          />,
        ),
        error ? 422 : 200,
      );
    },
  );
}
