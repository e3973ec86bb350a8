import type { RunEvent } from '@maitento/engine';
import type { PreparedRequestView } from '@maitento/gateway';
import type { ComponentChildren } from 'preact';
import { Json } from './json-view.js';

// A run's timeline (a waterfall): one bar per model turn, tool call, approval wait and wait for a message, placed and
// sized on the run's own time scale, child runs nested under the call that started them. Built from the stored
// events alone (a pure fold, like the engine's history), rendered on the server; each bar's place and length are
// classes (`o-N`, `w-N`), since the CSP allows no inline style.

/** Where the docs of an error code are (docs/errors.md, one heading per code). */
export const ERRORS_DOC = 'https://github.com/maitento/maitento/blob/main/docs/errors.md';

/** The address of an error code's entry in docs/errors.md (GitHub's anchor of the heading `` `code` ``). */
export function errorDocUrl(code: string): string {
  return `${ERRORS_DOC}#${code.toLowerCase().replace(/[^a-z0-9 _-]/g, '')}`;
}

/** What a bar stands for. `fail`: a tool call that failed. */
export type SpanKind = 'model' | 'tool' | 'fail' | 'approval' | 'input' | 'budget';

/** One bar of the timeline. */
export interface Span {
  /** Stable across renders: `span-<seq>` of the event that closed it (or opened it, while open). */
  id: string;
  kind: SpanKind;
  label: string;
  /** Epoch milliseconds. */
  start: number;
  end: number;
  /** The duration the events state (a model turn's or call's `durationMs`), else end − start; null while open. */
  durationMs: number | null;
  /** Short facts after the duration: tokens, HTTP status, who answered. */
  facts: string[];
  /** The detail shown when the step is opened: words and JSON. */
  detail: { title: string; text?: string; json?: unknown }[];
  error?: { code: string; message?: string };
  /** A call that handed a task to an agent: the child run. */
  childRunId?: string;
  /** A model turn's tokens (in + out) and cost in USD, when its provider reported them (cost: when priced). */
  tokens?: number;
  costUsd?: number;
}

/** A run's spans and its time window. */
export interface TimelineModel {
  start: number;
  end: number;
  spans: Span[];
  /** What its model turns spent, summed from their events (cost null: no turn was priced). */
  tokens: number;
  costUsd: number | null;
}

/** A cost in US dollars as the console shows it: `$12.40`, `$0.0028` (2 significant digits under a cent), `$0`. */
export function usd(value: number): string {
  if (value === 0) return '$0';
  if (value >= 0.01) return `$${value.toFixed(2)}`;
  if (value < 0.000001) return 'under $0.000001';
  return `$${Number(value.toPrecision(2)).toFixed(6).replace(/0+$/, '')}`;
}

/** A count of tokens: `1,234`. */
export const tokensText = (n: number) => `${n.toLocaleString('en')} tokens`;

type Data = Record<string, unknown>;
const ms = (iso: string) => Date.parse(iso);

/**
 * Folds a run's events into its bars; `now` closes what is still open (a live run). `prefix` starts every bar's id
 * (a child run's, so its ids differ from its parent's).
 */
export function buildTimeline(events: RunEvent[], now: number, prefix = ''): TimelineModel {
  const spans: Span[] = [];
  const first = events[0];
  const start = first ? ms(first.at) : now;
  let end = now;
  const calls = new Map<string, { args: unknown; request?: PreparedRequestView; childRunId?: string; at: number }>();
  const approvals = new Map<string, Span>();
  let input: Span | undefined;
  let budgetWait: Span | undefined;
  let tokens = 0;
  let costUsd: number | null = null;
  for (const event of events) {
    const d = event.data as Data;
    const at = ms(event.at);
    const key = `${d.index}:${d.toolCallId}`;
    switch (event.type) {
      case 'model-response': {
        const duration = typeof d.durationMs === 'number' ? d.durationMs : 0;
        const usage = (d.usage ?? {}) as { inputTokens?: number | null; outputTokens?: number | null };
        const toolCalls = Array.isArray(d.toolCalls) ? (d.toolCalls as { name: string; arguments?: unknown }[]) : [];
        const facts: string[] = [];
        const known = typeof usage.inputTokens === 'number' || typeof usage.outputTokens === 'number';
        const turnTokens = (usage.inputTokens ?? 0) + (usage.outputTokens ?? 0);
        const cost = typeof d.costUsd === 'number' ? d.costUsd : undefined;
        if (known) facts.push(`${usage.inputTokens ?? '?'} in / ${usage.outputTokens ?? '?'} out tokens`);
        if (cost !== undefined) facts.push(usd(cost));
        if (typeof d.model === 'string') facts.push(String(d.model));
        tokens += turnTokens;
        if (cost !== undefined) costUsd = (costUsd ?? 0) + cost;
        spans.push({
          id: `${prefix}span-${event.seq}`,
          kind: 'model',
          label: `Model turn ${d.step}${toolCalls.length ? `: asks for ${toolCalls.map((c) => c.name).join(', ')}` : ''}`,
          start: Math.max(start, at - duration),
          end: at,
          durationMs: duration,
          facts,
          ...(known ? { tokens: turnTokens } : {}),
          ...(cost === undefined ? {} : { costUsd: cost }),
          detail: [
            ...(typeof d.text === 'string' && d.text ? [{ title: "The model's words", text: d.text }] : []),
            ...(toolCalls.length ? [{ title: 'Tool calls asked for', json: toolCalls }] : []),
          ],
        });
        break;
      }
      case 'tool-call-started':
        // After its approval, when it needed one: the prepared request it carries stays with the call.
        calls.set(key, {
          ...(calls.get(key)?.request ? { request: calls.get(key)?.request } : {}),
          args: d.arguments,
          at,
          ...(typeof d.childRunId === 'string' ? { childRunId: d.childRunId } : {}),
        });
        break;
      case 'approval-requested': {
        const approval = (d.approval ?? {}) as { id?: string; functionName?: string };
        const call = calls.get(key);
        if (call && d.request) call.request = d.request as PreparedRequestView;
        const span: Span = {
          id: `${prefix}span-${event.seq}`,
          kind: 'approval',
          label: `Approval wait: ${approval.functionName ?? 'a call'}`,
          start: at,
          end: now,
          durationMs: null,
          facts: ['waiting'],
          detail: d.request ? [{ title: 'The prepared request (secrets masked)', json: d.request }] : [],
        };
        spans.push(span);
        if (approval.id) approvals.set(approval.id, span);
        if (!call) calls.set(key, { args: undefined, at, request: d.request as PreparedRequestView | undefined });
        break;
      }
      case 'approval-answered': {
        const span = approvals.get(String(d.approvalId));
        if (span === undefined) break;
        const by = (d.by ?? {}) as { keyName?: string };
        span.end = at;
        span.durationMs = Math.max(0, at - span.start);
        span.facts = [`${d.decision === 'approve' ? 'approved' : 'rejected'} by ${by.keyName ?? 'someone'}`];
        if (typeof d.reason === 'string' && d.reason) span.detail.push({ title: 'Reason', text: d.reason });
        if (d.arguments !== undefined) span.detail.push({ title: 'Arguments as edited', json: d.arguments });
        approvals.delete(String(d.approvalId));
        break;
      }
      case 'tool-result': {
        const call = calls.get(key);
        calls.delete(key);
        const duration = typeof d.durationMs === 'number' ? d.durationMs : 0;
        const ok = d.ok === true;
        const facts: string[] = [ok ? 'succeeded' : 'failed'];
        if (typeof d.status === 'number') facts.push(`HTTP ${d.status}`);
        spans.push({
          id: `${prefix}span-${event.seq}`,
          kind: ok ? 'tool' : 'fail',
          label: `Tool call ${d.name}`,
          start: Math.max(start, at - duration),
          end: at,
          durationMs: duration,
          facts,
          detail: [
            ...(call?.args !== undefined ? [{ title: 'Arguments', json: call.args }] : []),
            ...(call?.request ? [{ title: 'The prepared request (secrets masked)', json: call.request }] : []),
            { title: 'Response', text: String(d.result ?? '') },
          ],
          ...(typeof d.code === 'string' && d.code ? { error: { code: d.code } } : {}),
          ...(call?.childRunId ? { childRunId: call.childRunId } : {}),
        });
        break;
      }
      case 'input-requested':
        input = {
          id: `${prefix}span-${event.seq}`,
          kind: 'input',
          label: 'Waiting for the next message',
          start: at,
          end: now,
          durationMs: null,
          facts: ['waiting'],
          detail: typeof d.result === 'string' ? [{ title: 'The reply sent', text: d.result }] : [],
        };
        spans.push(input);
        break;
      case 'user-message':
        if (input) {
          input.end = at;
          input.durationMs = Math.max(0, at - input.start);
          input.facts = [`answered by ${((d.by ?? {}) as { keyName?: string }).keyName ?? 'someone'}`];
          input.detail.push({ title: 'The message', text: String(d.text ?? '') });
          input = undefined;
        }
        break;
      case 'budget-exceeded': {
        const spent = (d.spent ?? {}) as { tokens?: number; costUsd?: number };
        budgetWait = {
          id: `${prefix}span-${event.seq}`,
          kind: 'budget',
          label: 'Budget reached',
          start: at,
          end: now,
          durationMs: null,
          facts: [`spent ${tokensText(spent.tokens ?? 0)}, ${usd(spent.costUsd ?? 0)}`, 'waiting'],
          detail: [{ title: 'Spent, and the budget it reached', json: { spent: d.spent, budget: d.budget } }],
        };
        spans.push(budgetWait);
        break;
      }
      case 'budget-extended':
        if (budgetWait) {
          const by = (d.by ?? {}) as { keyName?: string };
          budgetWait.end = at;
          budgetWait.durationMs = Math.max(0, at - budgetWait.start);
          budgetWait.facts = [budgetWait.facts[0] as string, `extended by ${by.keyName ?? 'someone'}`];
          budgetWait.detail.push({ title: 'The new budget', json: d.budget });
          budgetWait = undefined;
        }
        break;
      case 'run-completed':
      case 'run-failed':
      case 'run-cancelled':
      case 'conversation-ended':
        end = at;
        break;
    }
  }
  // Calls still running: a bar up to now.
  for (const [, call] of calls) {
    if (call.args === undefined && call.request !== undefined) continue;
    spans.push({
      id: `${prefix}span-open-${call.at}`,
      kind: 'tool',
      label: 'Tool call under way',
      start: call.at,
      end,
      durationMs: null,
      facts: ['running'],
      detail: call.args === undefined ? [] : [{ title: 'Arguments', json: call.args }],
      ...(call.childRunId ? { childRunId: call.childRunId } : {}),
    });
  }
  for (const span of spans) if (span.end > end) span.end = end;
  // A budget that failed the run (onExceeded = "fail") was never waited on: its bar is the moment it was reached.
  if (budgetWait && end < now) {
    budgetWait.durationMs = Math.max(0, end - budgetWait.start);
    budgetWait.facts = [budgetWait.facts[0] as string, 'not extended'];
  }
  return { start, end: Math.max(end, start), spans, tokens, costUsd };
}

/** A duration in words: `850 ms`, `2.4 s`, `3 min 5 s`. */
export function duration(msValue: number): string {
  if (msValue < 1000) return `${Math.round(msValue)} ms`;
  if (msValue < 60_000) return `${(msValue / 1000).toFixed(1)} s`;
  const minutes = Math.floor(msValue / 60_000);
  if (minutes < 60) return `${minutes} min ${Math.round((msValue % 60_000) / 1000)} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** The place and length classes of a bar on a window (whole percents, the bar inside the track). */
export function barClasses(span: { start: number; end: number }, window: { start: number; end: number }): string {
  const total = Math.max(1, window.end - window.start);
  const offset = Math.min(100, Math.max(0, Math.floor(((span.start - window.start) / total) * 100)));
  const width = Math.min(100 - offset, Math.max(0, Math.ceil(((span.end - span.start) / total) * 100)));
  return `tl-bar o-${offset} w-${width}`;
}

const KIND_WORD: Record<SpanKind, string> = {
  model: 'model turn',
  tool: 'tool call',
  fail: 'failed tool call',
  approval: 'approval wait',
  input: 'wait for a message',
  budget: 'budget wait',
};

/** What a run's model turns spent, in words: `1,234 tokens, $0.0028` (no cost when none was priced). */
export function spentText(spent: { tokens: number; costUsd: number | null }): string {
  return spent.costUsd === null ? tokensText(spent.tokens) : `${tokensText(spent.tokens)}, ${usd(spent.costUsd)}`;
}

/** The child runs' timelines, by run id, for nesting (loaded by the route, a few levels deep). */
export type ChildTimelines = Map<string, TimelineModel>;

function Steps(props: { model: TimelineModel; window: { start: number; end: number }; children: ChildTimelines }) {
  return (
    <>
      {props.model.spans.map((span) => {
        const child = span.childRunId ? props.children.get(span.childRunId) : undefined;
        return (
          <li class={`tl-step k-${span.kind}`} id={span.id}>
            <details>
              <summary>
                <span class="tl-label">{span.label}</span>
                <span class="tl-track">
                  <span class={barClasses(span, props.window)} />
                </span>
                <span class="tl-meta">
                  <span class="tl-kind">{KIND_WORD[span.kind]}, </span>
                  <span class="tl-duration">{span.durationMs === null ? 'running' : duration(span.durationMs)}</span>
                  {span.facts.length ? ` · ${span.facts.join(' · ')}` : ''}
                </span>
              </summary>
              <div class="tl-detail">
                {span.error ? (
                  <p class="error">
                    Error <a href={errorDocUrl(span.error.code)}>{span.error.code}</a>
                  </p>
                ) : null}
                {span.childRunId ? (
                  <p>
                    Handed to a child run:{' '}
                    <a href={`/console/runs/${span.childRunId}`}>{span.childRunId.slice(0, 8)}</a>
                  </p>
                ) : null}
                {span.detail.length === 0 ? <p>Nothing more was recorded for this step.</p> : null}
                {span.detail.map((part) => (
                  <>
                    <h4>{part.title}</h4>
                    {part.json !== undefined ? (
                      <Json value={part.json} label={`${part.title} (${span.label})`} />
                    ) : (
                      <pre>{part.text ?? ''}</pre>
                    )}
                  </>
                ))}
              </div>
            </details>
            {child && child.spans.length > 0 ? (
              <ol aria-label={`Steps of child run ${span.childRunId?.slice(0, 8)}`}>
                <Steps model={child} window={props.window} children={props.children} />
              </ol>
            ) : null}
          </li>
        );
      })}
    </>
  );
}

/**
 * The timeline section; while the run has not ended it asks for itself again every second (`poll`, htmx, morphed so
 * an opened step stays open) and the last poll after the end drops the polling.
 */
export function Timeline(props: {
  runId: string;
  model: TimelineModel;
  children: ChildTimelines;
  poll: boolean;
}): ComponentChildren {
  const { model } = props;
  const live = props.poll
    ? { 'hx-get': `/console/runs/${props.runId}/timeline`, 'hx-trigger': 'every 1s', 'hx-swap': 'outerMorph' }
    : {};
  return (
    <section id="timeline" aria-labelledby="timeline-heading" {...live}>
      <h2 id="timeline-heading">Timeline</h2>
      <p class="muted">
        {`${duration(model.end - model.start)} from start to ${props.poll ? 'now' : 'end'}, ${model.spans.length} steps, ${spentText(model)}. Open a step for its detail.`}
      </p>
      <ul class="tl-legend" aria-label="Colours of the bars">
        {(Object.keys(KIND_WORD) as SpanKind[]).map((k) => (
          <li>
            <span class={`tl-swatch k-${k}`} />
            {KIND_WORD[k]}
          </li>
        ))}
      </ul>
      {model.spans.length === 0 ? (
        <p>No step yet.</p>
      ) : (
        <ol class="timeline" aria-label="Steps of the run, in the order they were recorded">
          <Steps model={model} window={model} children={props.children} />
        </ol>
      )}
    </section>
  );
}
