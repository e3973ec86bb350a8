import type { ApprovalView } from '@maitento/engine';
import type { PreparedRequestView } from '@maitento/gateway';
import { Json } from './json-view.js';
import { type Chrome, Csrf, Layout, shownHeader } from './views.js';

// The approvals inbox (decision 0270): each pending approval as a card that holds all a person needs to decide — the
// exact prepared request beside the model's arguments, the agent's words, the run's last user message, how long it
// has waited and when it expires — and the decision itself (approve, reject with a reason, edit then approve), made
// in place with htmx (plain forms without JavaScript). console.js adds the keyboard shortcuts.

/** How often an open inbox asks for its cards again (htmx; without JavaScript, reload the page). */
export const INBOX_REFRESH = 'every 1s';

/** The most approvals the inbox shows as whole cards; the rest are listed by name with a link. */
export const INBOX_CARDS = 20;

/** All an inbox card shows of one pending approval. */
export interface InboxCard {
  approval: ApprovalView;
  /** The prepared request's masked view, when stored. */
  request?: PreparedRequestView;
  /** The name of the secret the call sends, for the masked header. */
  secretName?: string;
  hash: string;
  /** The model's arguments and the values from bindings and run inputs. */
  shown: { request?: unknown; additionalInputs?: unknown };
  /** What the model said in the turn that made the call. */
  modelText?: string;
  /** The run's context: its last user message, else its inputs. */
  context?: { title: string; text?: string; json?: unknown };
  /** The model's arguments as JSON text to edit (a run's approval only: decision 0215). */
  editText?: string;
  editError?: string;
  reasonError?: string;
  reason?: string;
}

/** A span of time in words, rounded down: `45 s`, `12 min`, `3 h 5 min`, `2 d 4 h`. */
export function span(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h} h ${m % 60} min`;
  return `${Math.floor(h / 24)} d ${h % 24} h`;
}

function inboxForm(id: string, decision: 'approve' | 'reject') {
  return {
    method: 'post',
    action: `/console/approvals/${id}/${decision}`,
    'hx-post': `/console/approvals/${id}/${decision}`,
    'hx-target': `#approval-${id}`,
    'hx-swap': 'outerHTML',
  };
}

/** One pending approval as a card with its decision forms; `now` for the waited and expires-in times. */
export function ApprovalCard(props: { card: InboxCard; csrfToken: string; now: number }) {
  const { card, now } = props;
  const { approval: a, request } = card;
  const id = a.id;
  const waited = now - Date.parse(a.createdAt);
  const expires = a.expiresAt === null ? undefined : Date.parse(a.expiresAt) - now;
  const hidden = (
    <>
      <Csrf token={props.csrfToken} />
      <input type="hidden" name="hash" value={card.hash} />
      <input type="hidden" name="from" value="inbox" />
    </>
  );
  return (
    <article class="card" id={`approval-${id}`} tabindex={-1} aria-labelledby={`approval-${id}-title`}>
      <h2 id={`approval-${id}-title`}>
        <a href={`/console/approvals/${id}`}>Approve {a.functionName}?</a>
      </h2>
      <p class="card-meta">
        <span>
          Agent <strong>{a.agentName ?? 'none'}</strong>
        </span>
        <span>
          Run {a.runId ? <a href={`/console/runs/${a.runId}`}>{a.runId.slice(0, 8)}</a> : <strong>none</strong>}
        </span>
        <span>
          Waited <strong class="waited">{span(waited)}</strong>
        </span>
        <span>
          {expires === undefined ? (
            'Never expires'
          ) : expires <= 0 ? (
            <strong>Expired</strong>
          ) : (
            <>
              Expires in <strong class="expires">{span(expires)}</strong>
            </>
          )}
        </span>
      </p>
      <div class="side-by-side">
        <section aria-labelledby={`approval-${id}-request`}>
          <h3 id={`approval-${id}-request`}>The request that will be sent</h3>
          {request ? (
            <>
              <p class="request-line">
                {request.method} {request.url}
              </p>
              {Object.keys(request.headers).length > 0 ? (
                <table>
                  <caption>Headers (secrets masked)</caption>
                  <tbody>
                    {Object.entries(request.headers).map(([k, v]) => (
                      <tr>
                        <th scope="row">{k}</th>
                        <td>{shownHeader(v, card.secretName)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              ) : null}
              {request.body !== undefined ? (
                <>
                  <h4>Body</h4>
                  <Json value={request.body} label={`Body of ${a.functionName}`} />
                </>
              ) : null}
            </>
          ) : (
            <p>The prepared request was not stored (an approval made outside a run, or before schema 10).</p>
          )}
        </section>
        <section aria-labelledby={`approval-${id}-asked`}>
          <h3 id={`approval-${id}-asked`}>What the model asked for</h3>
          <Json value={card.shown.request ?? {}} label={`The model's arguments for ${a.functionName}`} />
          {card.shown.additionalInputs !== undefined &&
          Object.keys(card.shown.additionalInputs as object).length > 0 ? (
            <>
              <h3>From bindings and run inputs</h3>
              <Json
                value={card.shown.additionalInputs}
                label={`Values from bindings and run inputs (${a.functionName})`}
              />
            </>
          ) : null}
          <h3>The agent's reason</h3>
          {card.modelText ? <blockquote class="model-text">{card.modelText}</blockquote> : <p>It said nothing.</p>}
          {card.context ? (
            <>
              <h3>{card.context.title}</h3>
              {card.context.json !== undefined ? (
                <Json value={card.context.json} label={`${card.context.title} (${a.functionName})`} />
              ) : (
                <blockquote>{card.context.text}</blockquote>
              )}
            </>
          ) : null}
        </section>
      </div>
      <div class="decide">
        <form {...inboxForm(id, 'approve')}>
          {hidden}
          <button type="submit" class="primary approve-button">
            Approve
          </button>
        </form>
        <form {...inboxForm(id, 'reject')} class="reject-form" novalidate>
          {hidden}
          <label for={`reason-${id}`}>Reason for rejecting (required)</label>
          <textarea
            id={`reason-${id}`}
            name="reason"
            class="reason-field"
            rows={2}
            maxlength={2000}
            required
            aria-invalid={card.reasonError ? 'true' : undefined}
            aria-describedby={card.reasonError ? `reason-${id}-error` : undefined}
          >
            {card.reason ?? ''}
          </textarea>
          {card.reasonError ? (
            <p id={`reason-${id}-error`} class="error" role="alert">
              {card.reasonError}
            </p>
          ) : null}
          <button type="submit" class="danger">
            Reject
          </button>
        </form>
        {card.editText !== undefined ? (
          <details open={card.editError !== undefined}>
            <summary>Edit the model's arguments, then approve</summary>
            <form {...inboxForm(id, 'approve')} novalidate>
              {hidden}
              <label for={`arguments-${id}`}>The arguments (JSON; only what the model may set)</label>
              <textarea
                id={`arguments-${id}`}
                name="arguments"
                rows={6}
                maxlength={100000}
                aria-invalid={card.editError ? 'true' : undefined}
                aria-describedby={card.editError ? `arguments-${id}-error` : undefined}
              >
                {card.editText}
              </textarea>
              {card.editError ? (
                <p id={`arguments-${id}-error`} class="error" role="alert">
                  {card.editError}
                </p>
              ) : null}
              <button type="submit">Approve with these arguments</button>
            </form>
          </details>
        ) : null}
      </div>
    </article>
  );
}

/** The inbox's cards (or the line saying none is pending): the part an open inbox refreshes. */
export function InboxRows(props: { cards: InboxCard[]; more: ApprovalView[]; csrfToken: string; now: number }) {
  if (props.cards.length === 0) return <p>No approval is pending.</p>;
  return (
    <>
      {props.cards.map((card) => (
        <ApprovalCard card={card} csrfToken={props.csrfToken} now={props.now} />
      ))}
      {props.more.length > 0 ? (
        <section aria-labelledby="more-heading">
          <h2 id="more-heading">{props.more.length} more pending</h2>
          <ul>
            {props.more.map((a) => (
              <li id={`approval-${a.id}`}>
                <a href={`/console/approvals/${a.id}`}>{a.functionName}</a> ({a.agentName ?? 'no agent'})
              </li>
            ))}
          </ul>
        </section>
      ) : null}
    </>
  );
}

/** The approvals inbox: pending ones, oldest first, each decided in place, kept current while it is open. */
export function ApprovalsPage(props: {
  chrome: Chrome;
  cards: InboxCard[];
  more: ApprovalView[];
  now: number;
  notice?: string;
}) {
  return (
    <Layout title="Approvals" chrome={props.chrome} live="poll" script>
      <h1 id="approvals-heading" tabindex={-1} autofocus={props.notice !== undefined}>
        Approvals
      </h1>
      <p class="shortcuts" id="shortcuts">
        <input type="checkbox" id="shortcuts-on" checked /> <label for="shortcuts-on">Keyboard shortcuts</label>:{' '}
        <kbd>j</kbd> next, <kbd>k</kbd> previous, <kbd>a</kbd> approve, <kbd>r</kbd> write a reason to reject (with
        JavaScript on; off while typing).
      </p>
      {/* Shown by console.js where the browser has notifications; permission is asked for only on its click. */}
      <p>
        <button type="button" id="notify" aria-pressed="false" hidden>
          Notify me of new approvals
        </button>
      </p>
      <div id="inbox-notice" role="status">
        {props.notice ? <p>{props.notice}</p> : null}
      </div>
      {/* Morphed in place, so focus, what is typed and an opened edit stay where they were. */}
      <div id="inbox" hx-get="/console/approvals/rows" hx-trigger={INBOX_REFRESH} hx-swap="innerMorph">
        <InboxRows cards={props.cards} more={props.more} csrfToken={props.chrome.csrfToken} now={props.now} />
      </div>
    </Layout>
  );
}

/** What a decision made in the inbox answers (htmx): its card goes, the notice says what happened. */
export function InboxDecided(props: { notice: string; pending: number }) {
  return (
    <>
      <div id="inbox-notice" hx-swap-oob="innerHTML">
        <p>{props.notice}</p>
      </div>
      <span id="pending-count" hx-swap-oob="true">
        {props.pending}
      </span>
    </>
  );
}
