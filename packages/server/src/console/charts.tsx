import type { OverviewCharts } from '@maitento/store';
import { DataTable } from './table.js';
import { duration, tokensText, usd } from './timeline.js';

// The overview's charts (decision 0356): small SVGs drawn on the server, no chart runtime. Each is an image with its
// title and description, its figures written next to it as text (a legend of links, a table of the numbers), and
// its colours classes of the stylesheet (light and dark), never the only way a figure is told.

/** The statuses in the order their bars stack, bottom up, each with its colour class. */
const STACK = [
  'Completed',
  'Failed',
  'Cancelled',
  'Running',
  'PendingApproval',
  'PendingAuthorization',
  'PendingBudget',
  'PendingLimit',
  'WaitingForInput',
] as const;

const HOUR_MS = 60 * 60 * 1000;

/** A time as the runs list's `since`/`until` take it: UTC, to the minute. */
const minute = (ms: number) => new Date(ms).toISOString().slice(0, 16);

const runsLink = (filters: Record<string, string>) => `/console/runs?${new URLSearchParams(filters)}`;

/** Runs an hour by status: a stacked bar per hour over `hours` hours up to `now`'s hour. */
export function RunsPerHour(props: {
  id: string;
  title: string;
  hours: number;
  now: number;
  hourly: OverviewCharts['hourly'];
}) {
  const last = Math.floor(props.now / HOUR_MS) * HOUR_MS;
  const first = last - (props.hours - 1) * HOUR_MS;
  const buckets = Array.from({ length: props.hours }, (_, i) => ({
    start: first + i * HOUR_MS,
    counts: new Map<string, number>(),
  }));
  const totals = new Map<string, number>();
  for (const row of props.hourly) {
    const index = Math.round((Date.parse(row.hour) - first) / HOUR_MS);
    const bucket = buckets[index];
    if (bucket === undefined) continue;
    bucket.counts.set(row.status, (bucket.counts.get(row.status) ?? 0) + row.count);
    totals.set(row.status, (totals.get(row.status) ?? 0) + row.count);
  }
  const sum = (b: (typeof buckets)[number]) => [...b.counts.values()].reduce((n, c) => n + c, 0);
  const max = Math.max(1, ...buckets.map(sum));
  const all = [...totals.values()].reduce((n, c) => n + c, 0);
  const since = minute(first);
  const busiest = buckets.reduce((a, b) => (sum(b) > sum(a) ? b : a), buckets[0] as (typeof buckets)[number]);
  const width = props.hours * 10;
  const height = 100;
  const shown = STACK.filter((s) => (totals.get(s) ?? 0) > 0);
  return (
    <figure class="chart" aria-labelledby={`${props.id}-caption`}>
      <figcaption id={`${props.id}-caption`}>
        <a href={runsLink({ since })}>{props.title}</a>: {all} {all === 1 ? 'run' : 'runs'}
        {all > 0 ? `, at most ${sum(busiest)} in an hour` : ''}
      </figcaption>
      <svg
        class="chart-svg"
        viewBox={`0 0 ${width} ${height}`}
        preserveAspectRatio="none"
        role="img"
        aria-labelledby={`${props.id}-title ${props.id}-desc`}
      >
        <title id={`${props.id}-title`}>{props.title}, by status</title>
        <desc id={`${props.id}-desc`}>
          {`${all} runs since ${since} UTC, one bar an hour, stacked by status (${shown.map((s) => `${s} ${totals.get(s)}`).join(', ') || 'none'}); the tallest bar is ${sum(busiest)} runs.`}
        </desc>
        {buckets.map((b, i) => {
          let y = height;
          return STACK.filter((s) => (b.counts.get(s) ?? 0) > 0).map((s) => {
            const count = b.counts.get(s) ?? 0;
            const h = (count / max) * height;
            y -= h;
            return (
              <rect class={`c-${s}`} x={i * 10 + 1} y={y} width={8} height={h}>
                <title>{`${minute(b.start).replace('T', ' ')} UTC: ${count} ${s}`}</title>
              </rect>
            );
          });
        })}
      </svg>
      <p class="chart-axis" aria-hidden="true">
        <span>{props.hours} h ago</span>
        <span>now</span>
      </p>
      <ul class="chart-legend" aria-label={`${props.title}: runs by status`}>
        {shown.map((s) => (
          <li>
            <span class={`chart-swatch c-${s}`} />
            {s}: <a href={runsLink({ status: s, since })}>{totals.get(s)}</a>
          </li>
        ))}
      </ul>
      <details>
        <summary>The numbers, hour by hour</summary>
        <DataTable
          caption={`${props.title}: runs by hour (UTC) and status, hours with runs only`}
          columns={['Hour', 'Runs', 'By status']}
          rows={buckets.filter((b) => sum(b) > 0)}
          row={(b) => (
            <tr>
              <th scope="row">
                <a href={runsLink({ since: minute(b.start), until: minute(b.start + HOUR_MS) })}>
                  {minute(b.start).replace('T', ' ')}
                </a>
              </th>
              <td>{sum(b)}</td>
              <td>
                {STACK.filter((s) => b.counts.has(s))
                  .map((s) => `${s} ${b.counts.get(s)}`)
                  .join(', ')}
              </td>
            </tr>
          )}
        />
      </details>
    </figure>
  );
}

/** One row of a bar list: its label (a link), a bar as long as its share of the largest, and its figures as text. */
interface BarRow {
  label: string;
  href: string;
  value: number;
  /** A second value drawn over the first (errors of calls), when any. */
  part?: number;
  text: string;
}

/** Horizontal bars, one a row, each with its figures written out (the bars themselves are decoration). */
export function BarList(props: { id: string; title: string; rows: BarRow[]; empty: string; href: string }) {
  const max = Math.max(1, ...props.rows.map((r) => r.value));
  return (
    <figure class="chart" aria-labelledby={`${props.id}-caption`}>
      <figcaption id={`${props.id}-caption`}>
        <a href={props.href}>{props.title}</a>
      </figcaption>
      {props.rows.length === 0 ? (
        <p>{props.empty}</p>
      ) : (
        <ul class="bar-list" id={props.id}>
          {props.rows.map((r) => (
            <li>
              <a href={r.href}>{r.label}</a>
              <svg class="bar-svg" viewBox="0 0 100 10" preserveAspectRatio="none" aria-hidden="true">
                <rect class="bar-track" x={0} y={0} width={100} height={10} />
                <rect class="c-value" x={0} y={0} width={Math.max(0.5, (r.value / max) * 100)} height={10} />
                {r.part ? (
                  <rect class="c-Failed" x={0} y={0} width={Math.max(0.5, (r.part / max) * 100)} height={10} />
                ) : null}
              </svg>
              <span class="bar-text">{r.text}</span>
            </li>
          ))}
        </ul>
      )}
    </figure>
  );
}

/** The overview's charts section: runs an hour (24 h, 7 d), approval waits, tools, spend by interaction. */
export function OverviewChartsSection(props: {
  charts: OverviewCharts;
  now: number;
  since24h: string;
  since7d: string;
  approvals: boolean;
}) {
  const { charts: c, since24h, since7d } = props;
  const w = c.approvalWaits;
  return (
    <>
      <section aria-labelledby="ov-status" class="charts">
        <h2 id="ov-status">Runs an hour</h2>
        <RunsPerHour id="ch-24h" title="Runs in the last 24 h" hours={24} now={props.now} hourly={c.hourly} />
        <RunsPerHour id="ch-7d" title="Runs in the last 7 days" hours={168} now={props.now} hourly={c.hourly} />
      </section>
      <div class="side-by-side">
        {props.approvals ? (
          <section aria-labelledby="ov-waits">
            <h2 id="ov-waits">Approval waits</h2>
            <BarList
              id="ch-waits"
              title="How long answered approvals waited, last 7 days"
              href={runsLink({ status: 'PendingApproval' })}
              empty="No approval was answered in the last 7 days."
              rows={
                w === null
                  ? []
                  : [
                      { label: 'p50', ms: w.p50Ms },
                      { label: 'p95', ms: w.p95Ms },
                    ].map((p) => ({
                      label: p.label,
                      href: runsLink({ status: 'PendingApproval' }),
                      value: p.ms,
                      text: `${p.label} ${duration(p.ms)} (${w.count} answered)`,
                    }))
              }
            />
          </section>
        ) : null}
        <section aria-labelledby="ov-tools">
          <h2 id="ov-tools">Tool calls, last 24 h</h2>
          <BarList
            id="ch-tools"
            title="Calls by tool, errors in red"
            href={runsLink({ since: since24h })}
            empty="No tool was called in the last 24 hours."
            rows={c.tools.map((t) => ({
              label: t.name,
              href: runsLink({ tool: t.name, since: since24h }),
              value: t.calls,
              part: t.errors,
              text: `${t.calls} ${t.calls === 1 ? 'call' : 'calls'}, ${t.errors} ${t.errors === 1 ? 'error' : 'errors'}, p95 ${duration(t.p95Ms)}`,
            }))}
          />
        </section>
        <section aria-labelledby="ov-spend">
          <h2 id="ov-spend">Tokens and cost, last 24 h</h2>
          <BarList
            id="ch-spend"
            title="By interaction"
            href={runsLink({ since: since24h })}
            empty="No run started in the last 24 hours."
            rows={c.spend.map((s) => ({
              label: s.interaction,
              href: runsLink({ interaction: s.interaction, since: since24h }),
              value: s.tokens,
              text: `${tokensText(s.tokens)}, ${usd(s.costUsd)} (${s.runs} ${s.runs === 1 ? 'run' : 'runs'})`,
            }))}
          />
        </section>
      </div>
      <p class="muted">
        The charts count runs created since {since7d.replace('T', ' ')} UTC (7 days) and {since24h.replace('T', ' ')}{' '}
        UTC (24 hours), as of {minute(props.now).replace('T', ' ')} UTC (counted again at most once a minute).
      </p>
    </>
  );
}
