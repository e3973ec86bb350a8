import type { ApprovalView, RunEvent, RunSummary, RunView } from '@maitento/engine';
import type { PreparedRequestView } from '@maitento/gateway';
import type { AuditRecord, VersionSummary } from '@maitento/store';
import type { ComponentChildren, JSX } from 'preact';
import { renderToString } from 'preact-render-to-string';
import { Json } from './json-view.js';
import { DataTable } from './table.js';
import {
  type ChildTimelines,
  errorDocUrl,
  spentText,
  Timeline,
  type TimelineModel,
  tokensText,
  usd,
} from './timeline.js';

// The console's pages as typed JSX, rendered on the server (preact-render-to-string escapes every text and
// attribute value, so a run input or model text holding HTML or htmx attributes shows as text). No inline
// script or style: the CSP allows only /console/assets/.

/** What every signed-in page shows in its header. */
export interface Chrome {
  keyName: string;
  namespace: string;
  csrfToken: string;
  pendingCount: number;
  current:
    | 'overview'
    | 'approvals'
    | 'runs'
    | 'tools'
    | 'interactions'
    | 'knowledge'
    | 'files'
    | 'resources'
    | 'connections'
    | 'schedules'
    | 'triggers'
    | 'webhooks'
    | 'audit'
    | 'usage';
  /** An admin key: the webhooks, the audit log and the usage are in the navigation. */
  admin: boolean;
  /** A person's namespaces (single sign-on), when they have a role in more than one: the header switches between them. */
  namespaces?: string[];
}

/** A whole HTML document. */
export function page(node: JSX.Element): string {
  return `<!doctype html>${renderToString(node)}`;
}

/** One fragment (an SSE row). */
export function fragment(node: JSX.Element): string {
  return renderToString(node);
}

/**
 * `live`: the page loads htmx (`poll`), or htmx and its SSE extension (`sse`); otherwise no JavaScript. `script`: the
 * console's own script too (the inbox's keyboard shortcuts).
 */
function Document(props: {
  title: string;
  children: ComponentChildren;
  live?: 'poll' | 'sse';
  script?: boolean;
  refresh?: string;
}) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        {props.refresh ? <meta http-equiv="refresh" content={`0; url=${props.refresh}`} /> : null}
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="color-scheme" content="light dark" />
        {/* A morph (a live refresh) leaves a step or an edit someone opened open: htmx ignores the `open` attribute. */}
        {props.live ? <meta name="htmx-config" content={HTMX_CONFIG} /> : null}
        <title>{`${props.title} · Maitento console`}</title>
        <link rel="stylesheet" href="/console/assets/console.css" />
        {/* Not `defer`: htmx starts on DOMContentLoaded only if the document is still loading when it runs; a
            deferred htmx (from the cache) starts on a timer that can fire before a deferred hx-sse.min.js has
            arrived, and the page then never connects its live stream. Classic scripts in <head> run in order
            before DOMContentLoaded. */}
        {props.live ? <script src="/console/assets/htmx.min.js" /> : null}
        {props.live === 'sse' ? <script src="/console/assets/hx-sse.min.js" /> : null}
        {props.script ? <script src="/console/assets/console.js" /> : null}
      </head>
      <body>{props.children}</body>
    </html>
  );
}

/**
 * htmx's settings (its `htmx-config` meta): morphs ignore `open` of a `<details>` besides htmx's own attribute, and a
 * response of out-of-band parts only may still empty its target (a card decided in the inbox goes).
 */
const HTMX_CONFIG = JSON.stringify({ morphIgnore: ['data-htmx-powered', 'open'], allowEmptySwapAfterOOB: true });

/** The class of a status's badge: its colour, always beside its word. */
export function statusClass(status: string): string {
  switch (status) {
    case 'Completed':
    case 'Approved':
    case 'Active':
    case 'Ticking':
    case 'Delivered':
    case 'started':
      return 's-ok';
    case 'PendingApproval':
    case 'PendingAuthorization':
    case 'PendingBudget':
    case 'PendingLimit':
    case 'Pending':
    case 'WaitingForInput':
    case 'NeedsReauthorization':
    case 'Paused':
    case 'queued':
      return 's-warn';
    case 'Failed':
    case 'Rejected':
    case 'Expired':
    case 'refused':
    case 'missed':
    case 'failed':
      return 's-bad';
    case 'Running':
      return 's-info';
    default:
      return 's-idle';
  }
}

/** A status as a badge: the word, coloured. */
export function StatusBadge(props: { status: string; id?: string }) {
  return (
    <span id={props.id} class={`badge ${statusClass(props.status)}`}>
      {props.status}
    </span>
  );
}

/** The session's CSRF token as a form's hidden field. */
export function Csrf(props: { token: string }) {
  return <input type="hidden" name="_csrf" value={props.token} />;
}

/** A signed-in page: the header with the navigation, then `main`. */
export function Layout(props: {
  title: string;
  chrome: Chrome;
  children: ComponentChildren;
  live?: 'poll' | 'sse';
  script?: boolean;
}) {
  const { chrome } = props;
  const link = (name: Chrome['current'], href: string, label: ComponentChildren) => (
    <li>
      <a href={href} aria-current={chrome.current === name ? 'page' : undefined}>
        {label}
      </a>
    </li>
  );
  return (
    <Document title={props.title} live={props.live} script={props.script}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header>
        <p class="brand">Maitento console</p>
        <nav aria-label="Console">
          <ul>
            {link('overview', '/console/overview', 'Overview')}
            {link(
              'approvals',
              '/console/approvals',
              <>
                Approvals (<PendingCount count={chrome.pendingCount} /> pending)
              </>,
            )}
            {link('runs', '/console/runs', 'Runs')}
            {link('tools', '/console/tools', 'Tools')}
            {link('interactions', '/console/interactions', 'Interactions')}
            {link('knowledge', '/console/knowledge', 'Knowledge')}
            {link('files', '/console/files', 'Files')}
            {link('resources', '/console/resources', 'Resources')}
            {link('connections', '/console/connections', 'Connections')}
            {link('schedules', '/console/schedules', 'Schedules')}
            {link('triggers', '/console/triggers', 'Triggers')}
            {chrome.admin ? link('webhooks', '/console/webhooks', 'Webhooks') : null}
            {chrome.admin ? link('audit', '/console/audit', 'Audit log') : null}
            {chrome.admin ? link('usage', '/console/usage', 'Usage') : null}
          </ul>
        </nav>
        {chrome.namespaces && chrome.namespaces.length > 1 ? (
          <form method="post" action="/console/namespace" class="namespace">
            <Csrf token={chrome.csrfToken} />
            <label for="namespace">Namespace</label>{' '}
            <select id="namespace" name="namespace">
              {chrome.namespaces.map((n) => (
                <option value={n} selected={n === chrome.namespace}>
                  {n}
                </option>
              ))}
            </select>{' '}
            <button type="submit">Show</button>
          </form>
        ) : null}
        <form method="post" action="/console/logout" class="logout">
          <Csrf token={chrome.csrfToken} />
          <span>
            Signed in as {chrome.keyName} in {chrome.namespace}
          </span>{' '}
          <button type="submit">Sign out</button>
        </form>
      </header>
      <main id="main" tabindex={-1}>
        {props.children}
      </main>
    </Document>
  );
}

/** The sign-in page; `error` is shown as an alert; `sso`: the provider people sign in with (docs/sso.md). */
export function LoginPage(props: { csrfToken: string; error?: string; sso?: string }) {
  return (
    <Document title="Sign in">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header>
        <p class="brand">Maitento console</p>
      </header>
      <main id="main" tabindex={-1}>
        <h1>Sign in</h1>
        {props.error ? (
          <p role="alert" class="error">
            {props.error}
          </p>
        ) : null}
        <form method="post" action="/console/login">
          <Csrf token={props.csrfToken} />
          <label for="key">API key</label>
          <input
            id="key"
            name="key"
            type="password"
            autocomplete="current-password"
            required
            aria-invalid={props.error ? 'true' : undefined}
          />
          <button type="submit">Sign in</button>
        </form>
        {props.sso ? (
          <>
            <h2>Or sign in as a person</h2>
            <p>
              <a href="/console/login/oidc" class="button">
                Sign in with {props.sso}
              </a>
            </p>
          </>
        ) : null}
      </main>
    </Document>
  );
}

/**
 * The page after a single sign-on: it opens the console at once (a `refresh`, not a redirect, so the browser sends
 * the session's `SameSite=Strict` cookie: the request is no longer part of the provider's cross-site redirects).
 */
export function SignedInPage(props: { name: string; next: string }) {
  return (
    <Document title="Signed in" refresh={props.next}>
      <main id="main">
        <h1>Signed in</h1>
        <p>
          Signed in as {props.name}. <a href={props.next}>Open the console</a>
        </p>
      </main>
    </Document>
  );
}

/** An error page for a console request (status and code in words). */
export function ErrorPage(props: { title: string; message: string; code: string; signedIn?: Chrome }) {
  const body = (
    <>
      <h1>{props.title}</h1>
      <p role="alert" class="error">
        {props.message} <code>{props.code}</code>
      </p>
      <p>
        <a href="/console/approvals">Back to the console</a>
      </p>
    </>
  );
  if (props.signedIn)
    return (
      <Layout title={props.title} chrome={props.signedIn}>
        {body}
      </Layout>
    );
  return (
    <Document title={props.title}>
      <main id="main">{body}</main>
    </Document>
  );
}

/** A stored time as `YYYY-MM-DD HH:MM:SS UTC`. */
export function when(iso: string | null): string {
  return iso === null
    ? ''
    : iso
        .replace('T', ' ')
        .replace(/\.\d+Z$/, ' UTC')
        .replace(/Z$/, ' UTC');
}

/** The count of pending approvals in the navigation; `oob` when an inbox refresh swaps it out of band. */
export function PendingCount(props: { count: number; oob?: boolean }) {
  return (
    <span id="pending-count" hx-swap-oob={props.oob ? 'true' : undefined}>
      {props.count}
    </span>
  );
}

/** What one approval page shows besides the approval itself. */
export interface ApprovalDetail {
  approval: ApprovalView;
  /** The prepared request's masked view (from the run's `approval-requested` step). */
  request?: PreparedRequestView;
  /** The request's hash, carried by the forms. */
  hash: string;
  /** The model's arguments and the run inputs written into the call. */
  shown: { request?: unknown; additionalInputs?: unknown };
  /** What the model said in the turn that made the call. */
  modelText?: string;
  /**
   * Edit, then approve (decision 0215): the arguments the model may set, as JSON text to edit (a run's approval
   * only), and the edit's refusal shown next to them.
   */
  editText?: string;
  editError?: string;
  /** The reason field's error, shown next to it. */
  reasonError?: string;
  reason?: string;
  /** Who answered first, when this person's answer lost (409). */
  conflict?: string;
  /** Set after a decision: said, and focus is on this page's heading. */
  notice?: string;
}

/** Shows a masked header value: a secret as `•••• (secret NAME)`. */
export function shownHeader(value: string, secretName: string | undefined): string {
  return value.replaceAll('[secret]', `•••• (secret ${secretName ?? 'value'})`);
}

/** One approval, with Approve and Reject (reason required). */
export function ApprovalPage(props: { chrome: Chrome; detail: ApprovalDetail; secretName?: string }) {
  const { approval, request, shown } = props.detail;
  const d = props.detail;
  const pending = approval.status === 'Pending';
  const url = request ? new URL(request.url) : undefined;
  return (
    <Layout title={`Approval of ${approval.functionName}`} chrome={props.chrome}>
      <h1 id="approval-heading" tabindex={-1} autofocus={d.notice !== undefined}>
        Approve {approval.functionName}?
      </h1>
      {d.notice ? <p role="status">{d.notice}</p> : null}
      {d.conflict ? (
        <p role="alert" class="error">
          {d.conflict}
        </p>
      ) : null}
      <dl>
        <dt>Status</dt>
        <dd>
          <StatusBadge status={approval.status} />
        </dd>
        <dt>Agent</dt>
        <dd>{approval.agentName ?? 'none'}</dd>
        <dt>Run</dt>
        <dd>{approval.runId ? <a href={`/console/runs/${approval.runId}`}>{approval.runId}</a> : 'none'}</dd>
        <dt>Asked at</dt>
        <dd>{when(approval.createdAt)}</dd>
        {approval.expiresAt ? (
          <>
            <dt>Expires at</dt>
            <dd>{when(approval.expiresAt)}</dd>
          </>
        ) : null}
        {approval.answeredBy ? (
          <>
            <dt>Answered by</dt>
            <dd>
              {approval.answeredBy.keyName} at {when(approval.answeredAt)}
              {approval.reason ? `: ${approval.reason}` : ''}
            </dd>
          </>
        ) : null}
      </dl>
      <section aria-labelledby="call-heading">
        <h2 id="call-heading">The call</h2>
        {request && url ? (
          <>
            <p>
              <span class="method">{request.method}</span> <code class="url">{`${url.origin}${url.pathname}`}</code>
            </p>
            {url.search ? (
              <DataTable
                caption="Query"
                columns={['Name', 'Value']}
                rows={[...url.searchParams]}
                row={([k, v]) => (
                  <tr>
                    <th scope="row">{k}</th>
                    <td>{shownHeader(v, props.secretName)}</td>
                  </tr>
                )}
              />
            ) : null}
            <DataTable
              caption="Headers"
              columns={['Name', 'Value']}
              rows={Object.entries(request.headers)}
              row={([k, v]) => (
                <tr>
                  <th scope="row">{k}</th>
                  <td>{shownHeader(v, props.secretName)}</td>
                </tr>
              )}
            />
            {request.body !== undefined ? (
              <>
                <h3>Body</h3>
                <Json value={request.body} label="JSON body" />
              </>
            ) : null}
          </>
        ) : (
          <p>The prepared request of this approval was not stored (an approval made before schema 10).</p>
        )}
        <h3>The model's arguments</h3>
        <Json value={shown.request ?? {}} label="The model's arguments" />
        <h3>Values from bindings and run inputs</h3>
        <Json value={shown.additionalInputs ?? {}} label="Values from bindings and run inputs" />
        {d.modelText ? (
          <>
            <h3>What the model said before the call</h3>
            <blockquote class="model-text">{d.modelText}</blockquote>
          </>
        ) : null}
      </section>
      {pending ? (
        <section aria-labelledby="decide-heading">
          <h2 id="decide-heading">Your decision</h2>
          <form method="post" action={`/console/approvals/${approval.id}/approve`}>
            <Csrf token={props.chrome.csrfToken} />
            <input type="hidden" name="hash" value={d.hash} />
            <button type="submit" id="approve">
              Approve this call
            </button>
          </form>
          <form method="post" action={`/console/approvals/${approval.id}/reject`} novalidate>
            <Csrf token={props.chrome.csrfToken} />
            <input type="hidden" name="hash" value={d.hash} />
            <label for="reason">Reason for rejecting (required, up to 2000 characters)</label>
            <textarea
              id="reason"
              name="reason"
              rows={3}
              maxlength={2000}
              required
              aria-invalid={d.reasonError ? 'true' : undefined}
              aria-describedby={d.reasonError ? 'reason-error' : undefined}
            >
              {d.reason ?? ''}
            </textarea>
            {d.reasonError ? (
              <p id="reason-error" class="error" role="alert">
                {d.reasonError}
              </p>
            ) : null}
            <button type="submit" id="reject">
              Reject with this reason
            </button>
          </form>
          {d.editText !== undefined ? (
            <form method="post" action={`/console/approvals/${approval.id}/approve`} novalidate>
              <Csrf token={props.chrome.csrfToken} />
              <input type="hidden" name="hash" value={d.hash} />
              <label for="arguments">
                Or edit the model's arguments, then approve (only what the model may set; the call is checked and shown
                again in the log)
              </label>
              <textarea
                id="arguments"
                name="arguments"
                rows={8}
                maxlength={100000}
                aria-invalid={d.editError ? 'true' : undefined}
                aria-describedby={d.editError ? 'arguments-error' : undefined}
              >
                {d.editText}
              </textarea>
              {d.editError ? (
                <p id="arguments-error" class="error" role="alert">
                  {d.editError}
                </p>
              ) : null}
              <button type="submit" id="approve-edited">
                Approve with these arguments
              </button>
            </form>
          ) : null}
        </section>
      ) : null}
    </Layout>
  );
}

/** Filters of the runs list (each a query parameter: the URL of a filtered list can be shared). */
export interface RunFilters {
  status?: string;
  interaction?: string;
  agent?: string;
  /** A tool the run called (a call started, or one asked a person about). */
  tool?: string;
  /** Created at or after, UTC, `YYYY-MM-DDTHH:MM`. */
  since?: string;
  /** Created before, UTC, `YYYY-MM-DDTHH:MM`. */
  until?: string;
  /** Text in the run's id. */
  q?: string;
  /** A failed run's error code. */
  code?: string;
}

/** The runs list with filters (in the URL, applied in place with htmx) and cursor paging. */
export function RunsPage(props: {
  chrome: Chrome;
  runs: (RunSummary & { agents?: string[] })[];
  nextCursor: string | null;
  filters: RunFilters;
  statuses: readonly string[];
}) {
  const { filters } = props;
  const next = new URLSearchParams();
  for (const [k, v] of Object.entries(filters)) if (v) next.set(k, v);
  if (props.nextCursor) next.set('cursor', props.nextCursor);
  const shown = Object.entries(filters).filter(([, v]) => v);
  return (
    <Layout title="Runs" chrome={props.chrome} live="poll">
      <h1>Runs</h1>
      <form
        method="get"
        action="/console/runs"
        class="filters"
        aria-label="Filter runs"
        hx-get="/console/runs"
        hx-trigger="submit, change, input delay:400ms"
        hx-target="#runs-results"
        hx-select="#runs-results"
        hx-swap="outerHTML"
        hx-push-url="true"
      >
        <label for="status">Status</label>
        <select id="status" name="status">
          <option value="">Any</option>
          {props.statuses.map((s) => (
            <option value={s} selected={filters.status === s}>
              {s}
            </option>
          ))}
        </select>
        <label for="interaction">Interaction</label>
        <input id="interaction" name="interaction" value={filters.interaction ?? ''} />
        <label for="agent">Agent</label>
        <input id="agent" name="agent" value={filters.agent ?? ''} />
        <label for="tool">Tool called</label>
        <input id="tool" name="tool" value={filters.tool ?? ''} />
        <label for="since">Started from (UTC)</label>
        <input id="since" name="since" type="datetime-local" value={filters.since ?? ''} />
        <label for="until">Started before (UTC)</label>
        <input id="until" name="until" type="datetime-local" value={filters.until ?? ''} />
        <label for="q">Run id contains</label>
        <input id="q" name="q" type="search" value={filters.q ?? ''} />
        <label for="code">Error code</label>
        <input id="code" name="code" value={filters.code ?? ''} />
        <button type="submit">Filter</button>
      </form>
      <div id="runs-results">
        <p class="filter-line">
          {shown.length === 0 ? 'All runs' : `Filtered by ${shown.map(([k, v]) => `${k} ${v}`).join(', ')}`}
          {shown.length > 0 ? (
            <>
              {' '}
              (<a href="/console/runs">clear</a>)
            </>
          ) : null}
        </p>
        <DataTable
          caption="Runs, newest first"
          columns={['Run', 'Interaction', 'Status', 'Started', 'Result']}
          rows={props.runs}
          empty="No run matches."
          row={(r) => (
            <tr>
              <td>
                <a href={`/console/runs/${r.id}`}>{r.id.slice(0, 8)}</a>
              </td>
              <td>
                {r.interaction.name} v{r.interaction.version}
              </td>
              <td>
                <StatusBadge status={r.status} />
              </td>
              <td>{when(r.createdAt)}</td>
              <td>{r.error ? `${r.error.code}: ${r.error.message}` : (r.result ?? '')}</td>
            </tr>
          )}
        />
        {props.nextCursor ? (
          <p>
            <a href={`/console/runs?${next}`} rel="next">
              Older runs
            </a>
          </p>
        ) : null}
      </div>
    </Layout>
  );
}

/** The fields of a step's `data` a page shows (the wire's `data` is an open map; every field may be absent). */
interface StepData {
  step?: number;
  text?: string;
  toolCalls?: { name: string }[];
  name?: string;
  ok?: boolean;
  status?: number | null;
  durationMs?: number;
  code?: string | null;
  approval?: ApprovalView;
  decision?: string;
  by?: { keyName?: string };
  reason?: string | null;
  result?: string;
  message?: string;
  errors?: string[];
  provider?: string;
  endUser?: string;
  url?: string;
  authorizations?: unknown[];
}

function StepBody(props: { event: RunEvent }) {
  const { type } = props.event;
  const d = props.event.data as StepData;
  switch (type) {
    case 'run-started':
      return <span>Run started</span>;
    case 'model-response':
      return (
        <>
          <span>Model turn {String(d.step)}</span>
          {d.text ? <blockquote class="model-text">{String(d.text)}</blockquote> : null}
          {Array.isArray(d.toolCalls) && d.toolCalls.length > 0 ? (
            <span> asks for {d.toolCalls.map((c) => c.name).join(', ')}</span>
          ) : null}
          {typeof (d as { costUsd?: unknown }).costUsd === 'number' ? (
            <span> ({usd((d as { costUsd: number }).costUsd)})</span>
          ) : null}
        </>
      );
    case 'tool-call-started':
      return <span>Tool call {String(d.name)} started</span>;
    case 'tool-result':
      return (
        <span>
          Tool call {String(d.name)}: {d.ok ? 'succeeded' : 'failed'}
          {d.status === null || d.status === undefined ? '' : ` (HTTP ${d.status})`} in {String(d.durationMs)} ms
          {d.code ? ` (${d.code})` : ''}
        </span>
      );
    case 'approval-requested': {
      const a = d.approval;
      if (a === undefined) return <span>Approval asked</span>;
      return (
        <span>
          Approval asked for {a.functionName}: <a href={`/console/approvals/${a.id}`}>open the approval</a>
        </span>
      );
    }
    case 'approval-answered':
      return (
        <span>
          {d.decision === 'approve' ? 'Approved' : 'Rejected'} by {String(d.by?.keyName ?? '')}
          {d.reason ? `: ${d.reason}` : ''}
        </span>
      );
    case 'run-waiting':
      return <span>{Array.isArray(d.authorizations) ? 'Waiting for the end user to connect' : 'Waiting'}</span>;
    case 'authorization-requested':
      return (
        <span>
          {String(d.endUser)} must connect at {String(d.provider)} ({String(d.reason ?? '')}):{' '}
          <a href={String(d.url)} rel="noreferrer">
            the connect link to hand them
          </a>
        </span>
      );
    case 'authorization-completed':
      return (
        <span>
          {String(d.endUser)} connected at {String(d.provider)}
        </span>
      );
    case 'input-requested':
      return <span>Waiting for the next message</span>;
    case 'user-message':
      return (
        <>
          <span>Message from {String(d.by?.keyName ?? '')}</span>
          <blockquote class="model-text">{String(d.text ?? '')}</blockquote>
        </>
      );
    case 'result-invalid':
      return <span>The answer does not match the result schema: {(d.errors ?? []).join('; ')}</span>;
    case 'conversation-ended':
      return <span>Conversation ended: no message within its idle limit</span>;
    case 'run-completed':
      return (
        <>
          <span>Run completed</span>
          <blockquote class="model-text">{String(d.result)}</blockquote>
        </>
      );
    case 'run-failed':
      return (
        <span>
          Run failed: {String(d.message)} (<a href={errorDocUrl(String(d.code))}>{String(d.code)}</a>)
        </span>
      );
    case 'run-cancelled':
      return <span>Run cancelled</span>;
    case 'budget-exceeded': {
      const spent = (d as { spent?: { tokens: number; costUsd: number } }).spent ?? { tokens: 0, costUsd: 0 };
      return <span>Budget reached: spent {spentText(spent)}</span>;
    }
    case 'budget-extended': {
      const budget = (d as { budget?: { tokens: number | null; costUsd: number | null } }).budget;
      return (
        <span>
          Budget extended by {String(d.by?.keyName ?? '')} to {limitsText(budget ?? { tokens: null, costUsd: null })}
        </span>
      );
    }
    default:
      return <span>{type}</span>;
  }
}

/** One step of a run as a row with a stable id (`step-<seq>`): the same row in the page and over SSE. */
export function StepItem(props: { event: RunEvent }) {
  return (
    <li id={`step-${props.event.seq}`} data-seq={props.event.seq}>
      <time datetime={props.event.at}>{when(props.event.at)}</time> <StepBody event={props.event} />
    </li>
  );
}

/** What a run page no longer needs once the run has ended (Cancel, the reload link), removed out of band. */
export function EndedControls() {
  return (
    <>
      <div id="run-cancel" hx-swap-oob="delete" />
      <div id="run-reload" hx-swap-oob="delete" />
      <div id="budget" hx-swap-oob="delete" />
    </>
  );
}

/** The run status line, swapped out of band as the run moves on. */
export function RunStatusLine(props: { status: string; oob?: boolean }) {
  return (
    <span id="run-status" class={`badge ${statusClass(props.status)}`} hx-swap-oob={props.oob ? 'true' : undefined}>
      {props.status}
    </span>
  );
}

/** One run: status, result, timeline (live while it runs), inputs, pinned versions, its event log (live over SSE), Cancel. */
export function RunPage(props: {
  chrome: Chrome;
  run: RunView;
  events: RunEvent[];
  ended: boolean;
  /** The run's timeline and its child runs' (decision 0270). */
  timeline: TimelineModel;
  children: ChildTimelines;
  /** The run's trace in the trace backend (MT_TRACE_URL_TEMPLATE), when there is one. */
  traceUrl?: string;
  /** What this key may do: extend a budget (the `answer` level), cancel (the `run` level). */
  may: { answer: boolean; cancel: boolean };
  /** A refused budget extension, shown in the budget panel with what was typed. */
  budgetForm?: { error: string; tokens?: string; costUsd?: string };
}) {
  const { run, events } = props;
  const last = events.length === 0 ? 0 : events[events.length - 1].seq;
  const live = props.ended
    ? {}
    : {
        'hx-sse:connect': `/console/runs/${run.id}/live?after=${last}`,
        'hx-sse:close': 'done',
        'hx-swap': 'beforeend',
      };
  const started = events.find((e) => e.type === 'run-started');
  return (
    <Layout title={`Run ${run.id.slice(0, 8)}`} chrome={props.chrome} live={props.ended ? undefined : 'sse'}>
      <h1>
        Run {run.id.slice(0, 8)} of {run.interaction.name} v{run.interaction.version}
      </h1>
      <dl>
        <dt>Status</dt>
        <dd>
          <span aria-live="polite">
            <RunStatusLine status={run.status} />
          </span>
        </dd>
        <dt>Started</dt>
        <dd>{started ? when(started.at) : when(run.createdAt)}</dd>
        {run.agent ? (
          <>
            <dt>Agent</dt>
            <dd>{run.agent}</dd>
          </>
        ) : null}
        {run.parentRunId ? (
          <>
            <dt>Started by run</dt>
            <dd>
              <a href={`/console/runs/${run.parentRunId}`}>{run.parentRunId.slice(0, 8)}</a>
            </dd>
          </>
        ) : null}
        {run.origin ? (
          <>
            <dt>Started by {run.origin.kind}</dt>
            <dd id="run-origin">
              {run.origin.kind === 'schedule' ? (
                <a href={`/console/schedules/${encodeURIComponent(run.origin.name)}`}>{run.origin.name}</a>
              ) : (
                <a href={`/console/triggers/${encodeURIComponent(run.origin.name)}`}>{run.origin.name}</a>
              )}{' '}
              (version {run.origin.version})
              {run.origin.runId ? (
                <>
                  , when run <a href={`/console/runs/${run.origin.runId}`}>{run.origin.runId.slice(0, 8)}</a> ended{' '}
                  {run.origin.status ?? 'Completed'}
                </>
              ) : null}
            </dd>
          </>
        ) : null}
        {run.pendingApproval ? (
          <>
            <dt>Waits on</dt>
            <dd>
              <a href={`/console/approvals/${run.pendingApproval.id}`}>
                the approval of {run.pendingApproval.functionName}
              </a>
            </dd>
          </>
        ) : null}
        {run.pendingAuthorization ? (
          <>
            <dt>Waits on</dt>
            <dd id="run-authorization">
              {run.pendingAuthorization.endUser} to connect at {run.pendingAuthorization.provider} (
              {run.pendingAuthorization.reason}):{' '}
              <a href={run.pendingAuthorization.url} rel="noreferrer">
                the connect link to hand them
              </a>{' '}
              <code class="url">{run.pendingAuthorization.url}</code>, opened once, before{' '}
              {when(run.pendingAuthorization.linkExpiresAt)}
            </dd>
          </>
        ) : null}
        {run.waiting ? (
          <>
            <dt>Waits on</dt>
            <dd id="run-waiting">
              the rate limit {run.waiting.limit} of {run.waiting.tool} ({run.waiting.description}), until{' '}
              {when(run.waiting.until)}; it goes on by itself then, holding no worker meanwhile
            </dd>
          </>
        ) : null}
        {run.endUser ? (
          <>
            <dt>End user</dt>
            <dd>{run.endUser}</dd>
          </>
        ) : null}
        <dt>Spent</dt>
        <RunSpentLine usage={run.usage} />
        {run.budget ? (
          <>
            <dt>Budget</dt>
            <RunBudgetLine budget={run.budget} usage={run.usage} />
          </>
        ) : null}
      </dl>
      {run.status === 'PendingBudget' ? (
        <BudgetPanel
          runId={run.id}
          spent={spentAtBudget(events, run)}
          budget={run.budget ?? { tokens: null, costUsd: null }}
          csrfToken={props.chrome.csrfToken}
          may={props.may}
          form={props.budgetForm}
        />
      ) : props.ended ? null : (
        <div id="budget" />
      )}
      {run.error ? (
        <p class="error" id="run-error">
          Failed: {run.error.message} (<a href={errorDocUrl(run.error.code)}>{run.error.code}</a>)
        </p>
      ) : null}
      {run.result !== null && run.result !== undefined ? (
        <section aria-labelledby="result-heading">
          <h2 id="result-heading">Result</h2>
          {typeof run.result === 'string' ? (
            <blockquote class="model-text">{run.result}</blockquote>
          ) : (
            <Json value={run.result} label="The result, of the interaction's declared shape" />
          )}
        </section>
      ) : null}
      {props.traceUrl !== undefined ? (
        <p>
          <a id="run-trace" href={props.traceUrl} rel="noopener noreferrer">
            Trace of this run
          </a>
        </p>
      ) : null}
      {!props.ended && props.may.cancel ? (
        <form id="run-cancel" method="post" action={`/console/runs/${run.id}/cancel`}>
          <Csrf token={props.chrome.csrfToken} />
          <button type="submit" class="danger">
            Cancel this run
          </button>
        </form>
      ) : null}
      <Timeline runId={run.id} model={props.timeline} children={props.children} poll={!props.ended} />
      <h2>Inputs</h2>
      <DataTable
        caption="Inputs (a secret input shows its secret's id to a key that may use it, else a secret; never a value)"
        columns={['Name', 'Value']}
        rows={Object.entries(run.inputs)}
        row={([k, v]) => (
          <tr>
            <th scope="row">{k}</th>
            <td class="input-value">{typeof v === 'string' ? v : JSON.stringify(v)}</td>
          </tr>
        )}
      />
      <details>
        <summary>Versions pinned ({run.versions.length})</summary>
        <ul>
          {run.versions.map((v) => (
            <li>
              {v.kind} {v.name} v{v.version}
            </li>
          ))}
        </ul>
      </details>
      <h2>Event log</h2>
      {!props.ended && events.some((e) => e.type === 'input-requested') ? (
        <p>
          <a href={`/console/runs/${run.id}/chat`}>Chat with this conversation</a>
        </p>
      ) : null}
      <ol id="steps" {...live}>
        {events.map((e) => (
          <StepItem event={e} />
        ))}
      </ol>
      {!props.ended ? (
        <p id="run-reload">
          <a href={`/console/runs/${run.id}`}>Reload the steps</a> (they appear by themselves with JavaScript on).
        </p>
      ) : null}
    </Layout>
  );
}

/** A budget's limits in words: `1,000 tokens and $0.50`. */
function limitsText(budget: { tokens: number | null; costUsd: number | null }): string {
  const parts = [
    ...(budget.tokens === null ? [] : [tokensText(budget.tokens)]),
    ...(budget.costUsd === null ? [] : [usd(budget.costUsd)]),
  ];
  return parts.join(' and ') || 'no limit';
}

/** What a waiting run had spent when it reached its budget (its last `budget-exceeded`), else its usage now. */
function spentAtBudget(events: RunEvent[], run: RunView): { tokens: number; costUsd: number } {
  const reached = [...events].reverse().find((e) => e.type === 'budget-exceeded');
  return (
    (reached?.data as { spent?: { tokens: number; costUsd: number } } | undefined)?.spent ?? {
      tokens: run.usage.inputTokens + run.usage.outputTokens,
      costUsd: run.usage.costUsd,
    }
  );
}

/** A budget in words, with how much of each limit is spent: `1,000 tokens (82 % spent), $0.50 (40 % spent); then wait`. */
/** What a run spent (its "Spent" line); `oob` when a live step swaps it out of band as a model turn ends. */
export function RunSpentLine(props: { usage: RunView['usage']; oob?: boolean }) {
  const { usage } = props;
  return (
    <dd id="run-usage" hx-swap-oob={props.oob ? 'true' : undefined}>
      {tokensText(usage.inputTokens + usage.outputTokens)} ({usage.inputTokens.toLocaleString('en')} in,{' '}
      {usage.outputTokens.toLocaleString('en')} out), {usd(usage.costUsd)}
    </dd>
  );
}

/** A run's budget and how much of it is spent; `oob` as for {@link RunSpentLine}. */
export function RunBudgetLine(props: {
  budget: NonNullable<RunView['budget']>;
  usage: RunView['usage'];
  oob?: boolean;
}) {
  return (
    <dd id="run-budget-limits" hx-swap-oob={props.oob ? 'true' : undefined}>
      {budgetText(props.budget, props.usage)}
    </dd>
  );
}

function budgetText(budget: NonNullable<RunView['budget']>, usage: RunView['usage']): string {
  const share = (spent: number, limit: number) => `${Math.round((spent / limit) * 100)} % spent`;
  const parts: string[] = [];
  const tokens = usage.inputTokens + usage.outputTokens;
  if (budget.tokens !== null) parts.push(`${tokensText(budget.tokens)} (${share(tokens, budget.tokens)})`);
  if (budget.costUsd !== null) parts.push(`${usd(budget.costUsd)} (${share(usage.costUsd, budget.costUsd)})`);
  const then = budget.onExceeded === 'wait' ? 'then it waits for a person' : 'then it fails';
  return `${parts.join(', ') || 'no limit'}; ${then}`;
}

/**
 * A run that waits for a larger budget (PendingBudget, decision 0355): what it spent against which limit, a form to
 * extend it (the console's own route for POST /v1/runs/{id}/budget), and a way to end it instead.
 */
export function BudgetPanel(props: {
  runId: string;
  spent: { tokens: number; costUsd: number };
  budget: { tokens: number | null; costUsd: number | null };
  csrfToken: string;
  may: { answer: boolean; cancel: boolean };
  form?: { error: string; tokens?: string; costUsd?: string };
  /** Swapped in out of band (over SSE, as the run starts to wait). */
  oob?: boolean;
}) {
  const { runId, spent, budget } = props;
  // Suggested: twice the old limit (a limit must be above what was spent).
  const tokens =
    props.form?.tokens ?? (budget.tokens === null ? '' : String(Math.max(budget.tokens, spent.tokens) * 2));
  const cost =
    props.form?.costUsd ??
    (budget.costUsd === null ? '' : String(Number((Math.max(budget.costUsd, spent.costUsd) * 2).toPrecision(6))));
  return (
    <section id="budget" class="card" aria-labelledby="budget-heading" hx-swap-oob={props.oob ? 'true' : undefined}>
      <h2 id="budget-heading">This run reached its budget</h2>
      <p>
        It spent {spentText(spent)} against a budget of {limitsText(budget)}, and waits before its next model turn.
        Extend the budget and it goes on from where it stopped, or let it fail.
      </p>
      {props.may.answer ? (
        <form id="budget-extend" method="post" action={`/console/runs/${runId}/budget`}>
          <Csrf token={props.csrfToken} />
          <label for="budget-tokens">New token limit (input + output; empty: unchanged)</label>
          <input
            id="budget-tokens"
            name="tokens"
            type="number"
            min="1"
            step="1"
            inputmode="numeric"
            value={tokens}
            aria-describedby={props.form ? 'budget-error' : undefined}
            aria-invalid={props.form ? 'true' : undefined}
          />
          <label for="budget-cost">New cost limit in USD (empty: unchanged)</label>
          <input id="budget-cost" name="costUsd" type="number" min="0.000001" step="any" value={cost} />
          {props.form ? (
            <p id="budget-error" class="error" role="alert">
              {props.form.error}
            </p>
          ) : null}
          <button type="submit" class="primary">
            Extend the budget and go on
          </button>
        </form>
      ) : (
        <p>A key that answers approvals (admin, user, approver) can extend it.</p>
      )}
      {props.may.answer ? (
        <form id="budget-fail" method="post" action={`/console/runs/${runId}/budget`}>
          <Csrf token={props.csrfToken} />
          <input type="hidden" name="decision" value="fail" />
          <button type="submit" class="danger">
            Let it fail
          </button>{' '}
          <span class="muted">
            (it ends <code>Failed</code> with <code>api:runs:budget-exceeded</code>, as a budget that says "fail" ends a
            run)
          </span>
        </form>
      ) : null}
    </section>
  );
}

/** One resource kind with each name's versions. */
export interface ResourceGroup {
  kind: 'connector' | 'tool' | 'agent' | 'interaction';
  title: string;
  /** Disable and enable exist for connectors and tools. */
  toggles: boolean;
  items: { name: string; versions: VersionSummary[] }[];
}

/** Deployed connectors, tools, agents and interactions with their versions. */
export function ResourcesPage(props: { chrome: Chrome; groups: ResourceGroup[]; canToggle: boolean; notice?: string }) {
  return (
    <Layout title="Resources" chrome={props.chrome}>
      <h1>Resources</h1>
      {props.notice ? <p role="status">{props.notice}</p> : null}
      {props.groups.map((g) => (
        <section aria-labelledby={`${g.kind}-heading`}>
          <h2 id={`${g.kind}-heading`}>{g.title}</h2>
          <DataTable
            caption={`${g.title} and their versions, newest first`}
            columns={['Name', 'Version', 'Deployed at', 'State', g.toggles && props.canToggle ? 'Action' : null]}
            rows={g.items}
            empty="None deployed."
            row={(item) =>
              item.versions.map((v) => (
                <tr>
                  <th scope="row">{item.name}</th>
                  <td>{v.version}</td>
                  <td>{when(v.createdAt)}</td>
                  <td>{v.enabled ? 'Enabled' : 'Disabled'}</td>
                  {g.toggles && props.canToggle ? (
                    <td>
                      <form
                        method="post"
                        action={`/console/resources/${g.kind}/${encodeURIComponent(item.name)}/${v.version}/${v.enabled ? 'disable' : 'enable'}`}
                      >
                        <Csrf token={props.chrome.csrfToken} />
                        <button type="submit">
                          {v.enabled ? 'Disable' : 'Enable'} {item.name} version {v.version}
                        </button>
                      </form>
                    </td>
                  ) : null}
                </tr>
              ))
            }
          />
        </section>
      ))}
    </Layout>
  );
}

/** What the audit page is filtered by (its form's fields). */
export interface AuditFilters {
  action?: string;
  actor?: string;
}

/** The audit log of the namespace, newest first, a page at a time (an admin key). */
export function AuditPage(props: {
  chrome: Chrome;
  entries: AuditRecord[];
  nextCursor: string | null;
  filters: AuditFilters;
}) {
  const { filters } = props;
  const next = new URLSearchParams();
  for (const [k, v] of Object.entries(filters)) if (v) next.set(k, v);
  if (props.nextCursor) next.set('cursor', props.nextCursor);
  const summary = (value: Record<string, unknown> | null) => (value === null ? '' : JSON.stringify(value));
  return (
    <Layout title="Audit log" chrome={props.chrome}>
      <h1>Audit log</h1>
      <form method="get" action="/console/audit" class="filters">
        <label for="action">Action</label>
        <input id="action" name="action" value={filters.action ?? ''} placeholder="secret, deploy.applied" />
        <label for="actor">Actor</label>
        <input id="actor" name="actor" value={filters.actor ?? ''} placeholder="a key id, person:ID, or system" />
        <button type="submit">Filter</button>
      </form>
      <DataTable
        caption="Changes, newest first"
        columns={['When', 'Actor', 'Action', 'Target', 'Before', 'After']}
        rows={props.entries}
        empty="No audit row matches."
        row={(e) => (
          <tr>
            <td>{when(e.at)}</td>
            <td>
              {e.actor.kind === 'system'
                ? 'system'
                : e.actor.kind === 'person'
                  ? `person ${e.actor.id.slice('person:'.length, 'person:'.length + 8)} (${e.actor.role})`
                  : `${e.actor.id.slice(0, 8)} (${e.actor.role})`}{' '}
              via {e.actor.via}
            </td>
            <td>{e.action}</td>
            <td>
              {e.target.kind} {e.target.id}
            </td>
            <td>{summary(e.before)}</td>
            <td>{summary(e.after)}</td>
          </tr>
        )}
      />
      {props.nextCursor ? (
        <p>
          <a href={`/console/audit?${next}`} rel="next">
            Older changes
          </a>
        </p>
      ) : null}
    </Layout>
  );
}
