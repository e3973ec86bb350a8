import type { ApprovalView, RunEvent, RunStatus, RunView } from '@maitento/engine';
import { expect } from 'vitest';
import { step } from './steps.js';

export type { ApprovalView, RunEvent, RunView };

/** An answer of the REST API: status and parsed JSON body. */
// biome-ignore lint/suspicious/noExplicitAny: tests read answers of many shapes
export interface ApiAnswer<T = any> {
  status: number;
  body: T;
}

/** A small REST client over fetch, as any HTTP client would use the API. */
export interface Api {
  url: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read answers of many shapes
  request<T = any>(method: string, path: string, body?: unknown): Promise<ApiAnswer<T>>;
  /** Starts a run: `POST /v1/interactions/{name}/runs`. */
  startRun(name: string, inputs: Record<string, unknown>, extra?: Record<string, unknown>): Promise<ApiAnswer<RunView>>;
  getRun(id: string): Promise<RunView>;
  events(id: string): Promise<RunEvent[]>;
  /** Polls the run until `until(run)` holds, or fails with the run as last seen. */
  waitForRun(id: string, until: (run: RunView) => boolean, timeoutMs?: number): Promise<RunView>;
  /** Waits until the run has ended (Completed, Failed, Cancelled). */
  waitForEnd(id: string, timeoutMs?: number): Promise<RunView>;
  /** Deploys `files` with `POST /v1/deploy` and expects it to be applied. */
  deploy(files: { path: string; content: string }[]): Promise<void>;
}

/** A client of the server at `url` with `key`. */
export function api(url: string, key: string): Api {
  const request = <T>(method: string, path: string, body?: unknown): Promise<ApiAnswer<T>> =>
    step(`${method} ${path}`, () => send<T>(method, path, body));
  const send = async <T>(method: string, path: string, body?: unknown): Promise<ApiAnswer<T>> => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      // Every wait has a deadline: a request the server never answers fails the test with its route, not a hook's
      // timeout (undici's own is 5 minutes).
      signal: AbortSignal.timeout(60_000),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: keep the text for the assertion message
    }
    return { status: res.status, body: parsed as T };
  };
  const getRun = async (id: string) => {
    const r = await request<RunView>('GET', `/v1/runs/${id}`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body;
  };
  const waitForRun = async (id: string, until: (run: RunView) => boolean, timeoutMs = 30_000) => {
    const deadline = Date.now() + timeoutMs;
    let run = await getRun(id);
    while (!until(run)) {
      if (Date.now() > deadline) {
        const events = await request('GET', `/v1/runs/${id}/events`);
        throw new Error(
          `run ${id} did not reach the expected state in ${timeoutMs} ms: ${JSON.stringify(run)}\nevents: ${JSON.stringify(events.body)}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
      run = await getRun(id);
    }
    return run;
  };
  return {
    url,
    request,
    startRun: (name, inputs, extra = {}) =>
      request<RunView>('POST', `/v1/interactions/${encodeURIComponent(name)}/runs`, { inputs, ...extra }),
    getRun,
    events: async (id) => {
      const r = await request<RunEvent[] | { events: RunEvent[] }>('GET', `/v1/runs/${id}/events`);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return Array.isArray(r.body) ? r.body : r.body.events;
    },
    waitForRun,
    waitForEnd: (id, timeoutMs) => waitForRun(id, (r) => ENDED.includes(r.status), timeoutMs),
    deploy: async (files) => {
      const r = await request<{ applied: boolean }>('POST', '/v1/deploy', { files });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.applied).toBe(true);
    },
  };
}

const ENDED: RunStatus[] = ['Completed', 'Failed', 'Cancelled'];

/** The id of the tool call an event is about (tool-call-started, tool-result, approval-*). */
export function callIdOf(event: RunEvent): string | undefined {
  const d = event.data as Record<string, unknown>;
  return (d.toolCallId ?? d.callId) as string | undefined;
}

/**
 * Asserts that a run's events are whole: `seq` is 1, 2, 3, ... without gap or repeat, it starts with
 * run-started, every tool call the model made has exactly one result (a call rejected by a person has
 * a result and was never started), and every call that was started has its result.
 */
export function expectWholeEvents(events: RunEvent[]): void {
  expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
  expect(events[0]?.type).toBe('run-started');
  const ended = events.some((e) => e.type === 'run-completed');
  const made = events
    .filter((e) => e.type === 'model-response')
    .flatMap((e) => ((e.data as { toolCalls?: { id: string }[] }).toolCalls ?? []).map((c) => c.id));
  const started = new Set(events.filter((e) => e.type === 'tool-call-started').map(callIdOf));
  const results = events.filter((e) => e.type === 'tool-result').map(callIdOf);
  expect(new Set(results).size, `a tool call has two results: ${JSON.stringify(results)}`).toBe(results.length);
  for (const id of started) expect(results, `started call ${id} has a result`).toContain(id);
  for (const id of results) expect(made, `result for a call ${id} the model never made`).toContain(id);
  if (ended)
    expect([...results].sort(), 'each tool call of the model has exactly one result').toEqual([...made].sort());
}
