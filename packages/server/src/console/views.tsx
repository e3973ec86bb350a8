import type { ApprovalView, RunEvent, RunSummary, RunView } from '@maitento/engine';
import type { PreparedRequestView } from '@maitento/gateway';
import type { AuditRecord, VersionSummary } from '@maitento/store';
import type { ComponentChildren, JSX } from 'preact';
import { renderToString } from 'preact-render-to-string';

// The console's pages as typed JSX, rendered on the server (preact-render-to-string escapes every text and
// attribute value, so a run input or model text holding HTML or htmx attributes shows as text). No inline
// script or style: the CSP allows only /console/assets/.

/** What every signed-in page shows in its header. */
export interface Chrome {
  keyName: string;
  namespace: string;
  csrfToken: string;
  pendingCount: number;
  current: 'approvals' | 'runs' | 'resources' | 'audit';
  /** An admin key: the audit log is in the navigation. */
  admin: boolean;
}

/** A whole HTML document. */
export function page(node: JSX.Element): string {
  return `<!doctype html>${renderToString(node)}`;
}

/** One fragment (an SSE row). */
export function fragment(node: JSX.Element): string {
  return renderToString(node);
}

/** `live`: the page loads htmx (`poll`), or htmx and its SSE extension (`sse`); otherwise no JavaScript. */
function Document(props: { title: string; children: ComponentChildren; live?: 'poll' | 'sse' }) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${props.title} · Maitento console`}</title>
        <link rel="stylesheet" href="/console/assets/console.css" />
        {/* Not `defer`: htmx starts on DOMContentLoaded only if the document is still loading when it runs; a
            deferred htmx (from the cache) starts on a timer that can fire before a deferred hx-sse.min.js has
            arrived, and the page then never connects its live stream. Classic scripts in <head> run in order
            before DOMContentLoaded. */}
        {props.live ? <script src="/console/assets/htmx.min.js" /> : null}
        {props.live === 'sse' ? <script src="/console/assets/hx-sse.min.js" /> : null}
      </head>
      <body>{props.children}</body>
    </html>
  );
}

function Csrf(props: { token: string }) {
  return <input type="hidden" name="_csrf" value={props.token} />;
}

function Layout(props: { title: string; chrome: Chrome; children: ComponentChildren; live?: 'poll' | 'sse' }) {
  const { chrome } = props;
  const link = (name: Chrome['current'], href: string, label: ComponentChildren) => (
    <li>
      <a href={href} aria-current={chrome.current === name ? 'page' : undefined}>
        {label}
      </a>
    </li>
  );
  return (
    <Document title={props.title} live={props.live}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header>
        <p class="brand">Maitento console</p>
        <nav aria-label="Console">
          <ul>
            {link(
              'approvals',
              '/console/approvals',
              <>
                Approvals (<PendingCount count={chrome.pendingCount} /> pending)
              </>,
            )}
            {link('runs', '/console/runs', 'Runs')}
            {link('resources', '/console/resources', 'Resources')}
            {chrome.admin ? link('audit', '/console/audit', 'Audit log') : null}
          </ul>
        </nav>
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

/** The sign-in page; `error` is shown as an alert. */
export function LoginPage(props: { csrfToken: string; error?: string }) {
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

function when(iso: string | null): string {
  return iso === null
    ? ''
    : iso
        .replace('T', ' ')
        .replace(/\.\d+Z$/, ' UTC')
        .replace(/Z$/, ' UTC');
}

/** How often an open inbox asks for its rows again (htmx; without JavaScript, reload the page). */
export const INBOX_REFRESH = 'every 1s';

/** The approvals inbox: pending ones, oldest first, kept current while it is open. */
export function ApprovalsPage(props: { chrome: Chrome; approvals: ApprovalView[]; notice?: string }) {
  return (
    <Layout title="Approvals" chrome={props.chrome} live="poll">
      <h1 id="approvals-heading" tabindex={-1} autofocus={props.notice !== undefined}>
        Approvals
      </h1>
      {props.notice ? <p role="status">{props.notice}</p> : null}
      {/* Morphed in place, so focus and the reading position stay where they were. */}
      <div id="inbox" hx-get="/console/approvals/rows" hx-trigger={INBOX_REFRESH} hx-swap="innerMorph">
        <InboxRows approvals={props.approvals} />
      </div>
    </Layout>
  );
}

/** The count of pending approvals in the navigation; `oob` when an inbox refresh swaps it out of band. */
export function PendingCount(props: { count: number; oob?: boolean }) {
  return (
    <span id="pending-count" hx-swap-oob={props.oob ? 'true' : undefined}>
      {props.count}
    </span>
  );
}

/** The inbox's table (or the line saying none is pending): the part an open inbox refreshes. */
export function InboxRows(props: { approvals: ApprovalView[] }) {
  return (
    <>
      {props.approvals.length === 0 ? (
        <p>No approval is pending.</p>
      ) : (
        <table>
          <caption>Pending approvals, oldest first</caption>
          <thead>
            <tr>
              <th scope="col">Call</th>
              <th scope="col">Agent</th>
              <th scope="col">Run</th>
              <th scope="col">Asked at</th>
              <th scope="col">Status</th>
            </tr>
          </thead>
          <tbody>
            {props.approvals.map((a) => (
              <tr id={`approval-${a.id}`}>
                <td>
                  <a href={`/console/approvals/${a.id}`}>{a.functionName}</a>
                </td>
                <td>{a.agentName ?? ''}</td>
                <td>{a.runId ? <a href={`/console/runs/${a.runId}`}>{a.runId.slice(0, 8)}</a> : 'none'}</td>
                <td>{when(a.createdAt)}</td>
                <td>{a.status}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
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

function Json(props: { value: unknown; label: string }) {
  return (
    <section aria-label={props.label} tabindex={0} class="json">
      <pre>{JSON.stringify(props.value, null, 2)}</pre>
    </section>
  );
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
        <dd>{approval.status}</dd>
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
              <table>
                <caption>Query</caption>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Value</th>
                  </tr>
                </thead>
                <tbody>
                  {[...url.searchParams].map(([k, v]) => (
                    <tr>
                      <th scope="row">{k}</th>
                      <td>{shownHeader(v, props.secretName)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            ) : null}
            <table>
              <caption>Headers</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Value</th>
                </tr>
              </thead>
              <tbody>
                {Object.entries(request.headers).map(([k, v]) => (
                  <tr>
                    <th scope="row">{k}</th>
                    <td>{shownHeader(v, props.secretName)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
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
        </section>
      ) : null}
    </Layout>
  );
}

/** Filters of the runs list. */
export interface RunFilters {
  status?: string;
  interaction?: string;
  agent?: string;
}

/** The runs list with filters and cursor paging. */
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
  return (
    <Layout title="Runs" chrome={props.chrome}>
      <h1>Runs</h1>
      <form method="get" action="/console/runs" class="filters">
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
        <button type="submit">Filter</button>
      </form>
      {props.runs.length === 0 ? (
        <p>No run matches.</p>
      ) : (
        <table>
          <caption>Runs, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Run</th>
              <th scope="col">Interaction</th>
              <th scope="col">Status</th>
              <th scope="col">Started</th>
              <th scope="col">Result</th>
            </tr>
          </thead>
          <tbody>
            {props.runs.map((r) => (
              <tr>
                <td>
                  <a href={`/console/runs/${r.id}`}>{r.id.slice(0, 8)}</a>
                </td>
                <td>
                  {r.interaction.name} v{r.interaction.version}
                </td>
                <td>{r.status}</td>
                <td>{when(r.createdAt)}</td>
                <td>{r.error ? `${r.error.code}: ${r.error.message}` : (r.result ?? '')}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {props.nextCursor ? (
        <p>
          <a href={`/console/runs?${next}`} rel="next">
            Older runs
          </a>
        </p>
      ) : null}
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
      return <span>Waiting</span>;
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
          Run failed: {String(d.message)} ({String(d.code)})
        </span>
      );
    case 'run-cancelled':
      return <span>Run cancelled</span>;
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
    </>
  );
}

/** The run status line, swapped out of band as the run moves on. */
export function RunStatusLine(props: { status: string; oob?: boolean }) {
  return (
    <span id="run-status" hx-swap-oob={props.oob ? 'true' : undefined}>
      {props.status}
    </span>
  );
}

/** One run: inputs, steps (live over SSE while it runs), Cancel. */
export function RunPage(props: {
  chrome: Chrome;
  run: RunView;
  events: RunEvent[];
  ended: boolean;
  /** The run's trace in the trace backend (MT_TRACE_URL_TEMPLATE), when there is one. */
  traceUrl?: string;
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
  return (
    <Layout title={`Run ${run.id.slice(0, 8)}`} chrome={props.chrome} live={props.ended ? undefined : 'sse'}>
      <h1>
        Run {run.id.slice(0, 8)} of {run.interaction.name} v{run.interaction.version}
      </h1>
      <p>
        Status:{' '}
        <span aria-live="polite">
          <RunStatusLine status={run.status} />
        </span>
      </p>
      {props.traceUrl !== undefined ? (
        <p>
          <a id="run-trace" href={props.traceUrl} rel="noopener noreferrer">
            Trace of this run
          </a>
        </p>
      ) : null}
      {!props.ended ? (
        <form id="run-cancel" method="post" action={`/console/runs/${run.id}/cancel`}>
          <Csrf token={props.chrome.csrfToken} />
          <button type="submit">Cancel this run</button>
        </form>
      ) : null}
      <h2>Inputs</h2>
      <table>
        <caption>
          Inputs (a secret input shows its secret's id to a key that may use it, else a secret; never a value)
        </caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Value</th>
          </tr>
        </thead>
        <tbody>
          {Object.entries(run.inputs).map(([k, v]) => (
            <tr>
              <th scope="row">{k}</th>
              <td class="input-value">{typeof v === 'string' ? v : JSON.stringify(v)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h2>Steps</h2>
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
          {g.items.length === 0 ? (
            <p>None deployed.</p>
          ) : (
            <table>
              <caption>{g.title} and their versions, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Version</th>
                  <th scope="col">Deployed at</th>
                  <th scope="col">State</th>
                  {g.toggles && props.canToggle ? <th scope="col">Action</th> : null}
                </tr>
              </thead>
              <tbody>
                {g.items.flatMap((item) =>
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
                  )),
                )}
              </tbody>
            </table>
          )}
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
        <input id="actor" name="actor" value={filters.actor ?? ''} placeholder="a key id, or system" />
        <button type="submit">Filter</button>
      </form>
      {props.entries.length === 0 ? (
        <p>No audit row matches.</p>
      ) : (
        <table>
          <caption>Changes, newest first</caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Actor</th>
              <th scope="col">Action</th>
              <th scope="col">Target</th>
              <th scope="col">Before</th>
              <th scope="col">After</th>
            </tr>
          </thead>
          <tbody>
            {props.entries.map((e) => (
              <tr>
                <td>{when(e.at)}</td>
                <td>
                  {e.actor.kind === 'system' ? 'system' : `${e.actor.id.slice(0, 8)} (${e.actor.role})`} via{' '}
                  {e.actor.via}
                </td>
                <td>{e.action}</td>
                <td>
                  {e.target.kind} {e.target.id}
                </td>
                <td>{summary(e.before)}</td>
                <td>{summary(e.after)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
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
