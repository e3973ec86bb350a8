import type { RequestOptions } from '../client.js';
import { APIConnectionError, APIError, type ErrorResponseBody } from '../core/api-error.js';
import { path } from '../core/path.js';
import { retryDelayMs, sleep } from '../core/retry.js';
import { parseSse } from '../core/sse.js';
import type { Static } from 'typebox';
import type {
  ListRunEventsParams,
  ListRunsParams,
  RunAnswerParams,
  RunEvent,
  RunRejectParams,
  RunPage,
  RunView,
} from '../types.js';
import type { ExtendBudgetBodySchema, StartRunBodySchema } from '../wire/requests.js';
import { TERMINAL_EVENT_TYPES } from '../wire/constants.js';
import { APIResource } from './resource.js';

const TERMINAL_EVENTS = new Set<string>(TERMINAL_EVENT_TYPES);

/**
 * Parameters of {@link InteractionRuns.start}: `inputs` by name (prompt, binding and auth inputs; an auth input
 * is a secret's id), `interactive` (true by default; false is an app run, with nobody to ask for approvals) and
 * the interaction `version` (the latest when absent).
 */
export type StartRunParams = Static<typeof StartRunBodySchema>;
/** The new limits of `extendBudget`. */
export type ExtendBudgetParams = Static<typeof ExtendBudgetBodySchema>;

/** Parameters of {@link InteractionRuns.events}. */
export interface RunEventsParams extends ListRunEventsParams {
  /** Stops the iteration (the loop then throws the signal's reason). */
  signal?: AbortSignal;
  /** Reconnections in a row without a new event before giving up; default 5. */
  maxReconnects?: number;
  /** A connection silent this long (no event, no keep-alive) is dropped and reopened; default 45 000. */
  idleTimeoutMs?: number;
}

/** Parameters of {@link InteractionRuns.run}. */
export interface RunParams extends StartRunParams {
  /**
   * Called each time the run starts waiting for a person, once per pending approval (a redraft after a
   * rejection is a new approval, so it is called again), with the run as it stands. An approval asked by a child
   * run (an agent handed a task by a call) is one too: `run.pendingApproval.runId` names the run that asks and
   * `agentName` its agent; answering through `run.id` answers it. Approve or reject from here to go on. Called
   * too when the run waits for its end user to connect an account (`PendingAuthorization`), once per connect link:
   * hand `run.pendingAuthorization.url` to the person; the run goes on by itself once they have connected. Called
   * too, once per wait, when a tool call waits for its rate limit's window (`PendingLimit`, docs/limits.md):
   * `run.waiting` says which limit and `until` when; nothing is to be done, the run goes on by itself then.
   */
  onWaiting?: (run: RunView) => void | Promise<void>;
  signal?: AbortSignal;
}

/** `mt.interactionRuns`: start runs of interactions, follow them, cancel them and answer their approvals. */
export class InteractionRuns extends APIResource {
  /** Starts a run; resolves with it as stored (usually `Running`), before it has done anything. */
  async start(name: string, params: StartRunParams = {}, options?: RequestOptions): Promise<RunView> {
    return this.client.request({ method: 'POST', path: path`/v1/interactions/${name}/runs`, body: params }, options);
  }

  /** One run as it stands now. */
  async get(id: string, options?: RequestOptions): Promise<RunView> {
    return this.client.request({ method: 'GET', path: path`/v1/runs/${id}` }, options);
  }

  /**
   * One page of the namespace's runs, newest first, as summaries (no inputs, the result cut to 200 characters:
   * {@link get} has all); pass `nextCursor` as `cursor` for the next.
   */
  async list(params: ListRunsParams = {}, options?: RequestOptions): Promise<RunPage> {
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(params)) if (value !== undefined) query.set(key, String(value));
    const text = query.toString();
    return this.client.request({ method: 'GET', path: `/v1/runs${text ? `?${text}` : ''}` }, options);
  }

  /** Cancels a run that has not ended (`api:runs:already-ended`, 409, for one that has). */
  async cancel(id: string, options?: RequestOptions): Promise<RunView> {
    return this.client.request({ method: 'POST', path: path`/v1/runs/${id}/cancel` }, options);
  }

  /**
   * Extends the budget of a run that reached it (PendingBudget): each limit given replaces the old one; the run goes
   * on (docs/runs.md, "Usage and budgets"). `{ onExceeded: 'fail' }` with no larger limit lets it fail instead.
   */
  async extendBudget(id: string, params: ExtendBudgetParams, options?: RequestOptions): Promise<RunView> {
    return this.client.request({ method: 'POST', path: path`/v1/runs/${id}/budget`, body: params }, options);
  }

  /** Approves the call the run waits on (or the approval named): exactly that call is made. */
  async approve(
    id: string,
    params: Pick<RunAnswerParams, 'approvalId'> = {},
    options?: RequestOptions,
  ): Promise<RunView> {
    return this.client.request({ method: 'POST', path: path`/v1/runs/${id}/approve`, body: params }, options);
  }

  /** Rejects the call the run waits on with a reason; the model is told it and may redraft. */
  async reject(id: string, params: RunRejectParams, options?: RequestOptions): Promise<RunView> {
    return this.client.request({ method: 'POST', path: path`/v1/runs/${id}/reject`, body: params }, options);
  }

  /**
   * One page of the stored events of a run with `seq` above `after`, in order: at most `limit` (default 100, at
   * most 1000); one request, no waiting. {@link storedEvents} reads them all, page by page.
   */
  async listEvents(id: string, params: ListRunEventsParams = {}, options?: RequestOptions): Promise<RunEvent[]> {
    const query = new URLSearchParams();
    if (params.after) query.set('after', String(params.after));
    if (params.limit !== undefined) query.set('limit', String(params.limit));
    const text = query.toString();
    return this.client.request(
      { method: 'GET', path: `${path`/v1/runs/${id}/events`}${text ? `?${text}` : ''}` },
      options,
    );
  }

  /** Every stored event of a run with `seq` above `after`, in order, read a page of `limit` (default 1000) at a time. */
  async *storedEvents(
    id: string,
    params: ListRunEventsParams = {},
    options?: RequestOptions,
  ): AsyncGenerator<RunEvent> {
    const limit = params.limit ?? 1000;
    let after = params.after ?? 0;
    for (;;) {
      const page = await this.listEvents(id, { after, limit }, options);
      for (const event of page) yield event;
      const last = page.at(-1);
      if (page.length < limit || last === undefined) return;
      after = last.seq;
    }
  }

  /**
   * The run's events as they happen, over the server's live stream: the stored ones after `after` first,
   * then each new one, ending after `run-completed`, `run-failed` or `run-cancelled`. A dropped connection
   * is reopened with `Last-Event-ID`, so no event is lost or repeated. Breaking out of the loop closes it.
   */
  async *events(id: string, params: RunEventsParams = {}): AsyncGenerator<RunEvent> {
    const route = path`/v1/runs/${id}/stream`;
    const maxReconnects = params.maxReconnects ?? 5;
    const idleTimeoutMs = params.idleTimeoutMs ?? 45_000;
    let after = params.after ?? 0;
    let failures = 0;
    for (;;) {
      let lastError: unknown;
      let stream: { response: Response; close: () => void } | undefined;
      try {
        stream = await this.client.openStream(route, { lastEventId: String(after), signal: params.signal });
      } catch (error) {
        if (params.signal?.aborted) throw params.signal.reason;
        if (!isReconnectable(error)) throw error;
        lastError = error;
      }
      if (stream) {
        let idle: NodeJS.Timeout | undefined;
        const close = stream.close;
        const touch = () => {
          clearTimeout(idle);
          idle = setTimeout(close, idleTimeoutMs);
        };
        try {
          touch();
          for await (const message of parseSse(stream.response.body as ReadableStream<Uint8Array>, touch)) {
            if (message.event === 'error') throw streamError(message.data, route);
            const event = JSON.parse(message.data) as RunEvent;
            if (event.seq <= after) continue;
            after = event.seq;
            failures = 0;
            yield event;
            if (TERMINAL_EVENTS.has(event.type)) return;
          }
        } catch (error) {
          if (params.signal?.aborted) throw params.signal.reason;
          if (error instanceof APIError) throw error;
          lastError = error;
        } finally {
          clearTimeout(idle);
          close();
        }
      }
      // The connection ended before the run did (a dropped connection, a server restarting): reopen it.
      failures++;
      if (failures > maxReconnects) {
        throw lastError instanceof APIConnectionError
          ? lastError
          : new APIConnectionError(this.client.baseUrl + route, lastError);
      }
      await sleep(retryDelayMs(failures, undefined), params.signal);
    }
  }

  /**
   * Starts a run and follows it to its end: calls `onWaiting(run)` once for each approval it waits on (those of the
   * child runs below it included), and resolves with the finished run (`Completed`, `Failed` or `Cancelled`), or,
   * for a conversation, with the run waiting for the next message (`WaitingForInput`, its first reply in `result`):
   * continue it with {@link send}.
   */
  async run(name: string, params: RunParams = {}, options?: RequestOptions): Promise<RunView> {
    const { onWaiting, signal, ...start } = params;
    const run = await this.start(name, start, { ...options, signal });
    return this.follow(run.id, 0, { onWaiting, signal });
  }

  /**
   * Sends the next message of a conversation that waits for one (`WaitingForInput`) and follows the run until it
   * waits again or ends, calling `onWaiting` for each approval on the way as {@link run} does: resolves with the run,
   * its reply in `result`. Errors: `api:runs:message-empty` (422), `api:runs:not-waiting-for-input` (409),
   * `api:runs:already-ended` (409).
   */
  async send(
    id: string,
    text: string,
    params: Pick<RunParams, 'onWaiting' | 'signal'> = {},
    options?: RequestOptions,
  ): Promise<RunView> {
    await this.client.request(
      { method: 'POST', path: path`/v1/runs/${id}/messages`, body: { text } },
      { ...options, signal: params.signal },
    );
    // The message just stored is the run's last `user-message`: no other can be stored until the run waits again.
    let after = 0;
    for await (const event of this.storedEvents(id, {}, { signal: params.signal })) {
      if (event.type === 'user-message') after = event.seq;
    }
    return this.follow(id, after, params);
  }

  // Follows a run's events after `after` until it ends or waits for a message, asking `onWaiting` about approvals,
  // the approvals of the child runs its calls start included (agents as tools).
  private async follow(
    id: string,
    after: number,
    { onWaiting, signal }: Pick<RunParams, 'onWaiting' | 'signal'>,
  ): Promise<RunView> {
    const asked = new Set<string>();
    // The run followed shows the approval it waits on, its own or one of a run below it (`pendingApproval.runId`
    // names the run that asks): its status follows a child's, in the transaction that stores the child's event.
    const askIfWaiting = async () => {
      const current = await this.get(id, { signal });
      const pending = current.pendingApproval;
      if (current.status === 'PendingApproval' && pending && !asked.has(pending.id)) {
        asked.add(pending.id);
        await onWaiting?.(current);
      }
      await askIfAuthorizing(current);
    };
    // A run (this one, or a child run below it) that waits for its end user to connect: told once per connect link.
    const askIfAuthorizing = async (current: RunView) => {
      const authorization = current.pendingAuthorization;
      if (current.status === 'PendingAuthorization' && authorization && !asked.has(authorization.url)) {
        asked.add(authorization.url);
        await onWaiting?.(current);
      }
    };
    // A call that waits for its limit's window (PendingLimit): told once per wait; the run goes on by itself.
    const tellIfLimited = async (runId: string, event: RunEvent) => {
      if (event.type !== 'limit-waiting' || asked.has(`${runId}/${event.seq}`)) return;
      asked.add(`${runId}/${event.seq}`);
      const current = await this.get(runId, { signal });
      if (current.status === 'PendingLimit') await onWaiting?.(current);
    };
    // A call that handed a task to an agent started a child run: the parent stores nothing while the child goes
    // on or waits for a person, so the child's own stream is followed to its end, its children likewise.
    const followChild = async (childId: string): Promise<void> => {
      for await (const event of this.events(childId, { signal })) {
        await tellIfLimited(childId, event);
        if (event.type === 'run-waiting') {
          await askIfWaiting();
          // A child that waits for its end user to connect leaves its parent Running: the child is the one to show.
          await askIfAuthorizing(await this.get(childId, { signal }));
        }
        const child = childRunOf(event);
        if (child !== undefined) await followChild(child);
      }
    };
    for await (const event of this.events(id, { signal, after })) {
      // Stored with the PendingApproval status; `approval-requested` comes before the turn's other calls are made.
      if (event.type === 'run-waiting') await askIfWaiting();
      await tellIfLimited(id, event);
      const child = childRunOf(event);
      if (child !== undefined) await followChild(child);
      // A conversation's reply: stored with the WaitingForInput status.
      if (event.type === 'input-requested') break;
    }
    return this.get(id, { signal });
  }
}

/** The child run a `tool-call-started` started (a call of an agent as a tool), if any. */
function childRunOf(event: RunEvent): string | undefined {
  const child = event.type === 'tool-call-started' ? event.data.childRunId : undefined;
  return typeof child === 'string' ? child : undefined;
}

function isReconnectable(error: unknown): boolean {
  if (error instanceof APIError) return error.status === 408 || error.status === 429 || error.status >= 500;
  return error instanceof APIConnectionError;
}

function streamError(data: string, route: string): APIError {
  let body: ErrorResponseBody & { status?: unknown };
  try {
    body = JSON.parse(data) as ErrorResponseBody;
  } catch {
    body = { error: data, code: 'api:sdk:unexpected-response' };
  }
  const status = typeof body.status === 'number' ? body.status : 502;
  return APIError.fromResponse(status, body, new Headers(), { method: 'GET', url: route });
}
