import type { Engine, RunEvent, RunEventType, RunViewer } from '@maitento/engine';
import { isMtError, type MtError } from '@maitento/errors';
import { TERMINAL_EVENT_TYPES } from '@maitento/sdk';
import { FALLBACK_POLL_MS, RUN_WATCH_RENEW_MS, STREAM_KEEPALIVE_MS, type Wakeups, wakeTopics } from '@maitento/store';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** Event types after which a run's stream ends. */
const TERMINAL_EVENTS = new Set<RunEventType>(TERMINAL_EVENT_TYPES);

/** How many events a stream reads at once: a long transcript is read and written out a page at a time. */
export const STREAM_PAGE = 100;

/**
 * How often a stream asks for new events when no wake-up came (the fallback: it reads as soon as `run:<id>` is
 * woken), and how long it may stay silent before a keep-alive comment.
 */
export interface EventStreamTiming {
  pollMs: number;
  keepAliveMs: number;
}

/**
 * The default timing: a fallback read every 2 s while wake-ups are not listening, a keep-alive comment every 15 s of
 * silence.
 */
export const DEFAULT_STREAM_TIMING: EventStreamTiming = { pollMs: FALLBACK_POLL_MS, keepAliveMs: STREAM_KEEPALIVE_MS };

/** One open stream, so the server can end it when it closes (or, with the error sent first, when its key goes). */
export interface OpenStream {
  stop(error?: MtError): void;
}

/** What one stream serves. */
export interface RunStreamSpec {
  engine: Engine;
  namespace: string;
  /** Who reads the stream: a secret input it may not use is shown as a secret (docs/security.md). */
  viewer: RunViewer;
  runId: string;
  /** Events with `seq` above this are sent. */
  after: number;
  /** The run has already ended: send what is left and close. */
  ended: boolean;
  timing: EventStreamTiming;
  /** Open streams of the server: this one is added while it is open. */
  open: Set<OpenStream>;
  /** Wakes the stream when an event is stored (`run:<id>`). */
  wakeups: Wakeups;
  /** Subscribes the stream's `stop` to what ends it early (its key deleted); returns the unsubscribe. */
  endWhen?: (stop: (error?: MtError) => void) => () => void;
  /** How an event is written (default {@link formatSseEvent}; the console writes HTML rows). */
  format?: (event: RunEvent) => string;
}

/** An error told on a stream that has started: an `error` event with the registry error's message, code, status. */
function errorFrame(error: MtError): string {
  return `event: error\ndata: ${JSON.stringify({ error: error.message, code: error.code, status: error.status })}\n\n`;
}

const INTERNAL_ERROR_FRAME = `event: error\ndata: ${JSON.stringify({ error: 'Internal server error', code: 'api:server:internal', status: 500 })}\n\n`;

/** One event in the SSE wire format: `id`, `event` and `data` (the RunEvent as JSON) lines. */
export function formatSseEvent(event: RunEvent): string {
  const { seq, type, at, data } = event;
  return `id: ${seq}\nevent: ${type}\ndata: ${JSON.stringify({ seq, type, at, data })}\n\n`;
}

/** The `after` of a stream request: `Last-Event-ID` (a reconnecting client) wins over `?after=`. */
export function resumePoint(lastEventId: string | string[] | undefined, after: number | undefined): number | undefined {
  const header = Array.isArray(lastEventId) ? lastEventId[0] : lastEventId;
  if (header !== undefined && /^\s*[0-9]{1,15}\s*$/.test(header)) return Number(header);
  return after;
}

/**
 * Takes the response over and streams a run's events as Server-Sent Events: the stored ones after `after`
 * ({@link STREAM_PAGE} at a time), then new ones as they are stored (read when `run:<id>` is woken, or every `pollMs`
 * while wake-ups are not listening), until a terminal event, the client going away, `endWhen`, or the server closing.
 * The run is marked watched (`Engine.watchRun`) before the first read and while the stream is open, so its appends
 * wake `run:<id>`. Reading stops as soon as the connection closes.
 */
export async function streamRunEvents(
  request: FastifyRequest,
  reply: FastifyReply,
  spec: RunStreamSpec,
): Promise<void> {
  const { engine, namespace, runId, timing } = spec;
  const format = spec.format ?? formatSseEvent;
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    // Proxies such as nginx would otherwise hold events back in their buffer.
    'x-accel-buffering': 'no',
  });
  let closed = false;
  let wake: (() => void) | undefined;
  // Set by a wake-up that comes while the stream reads: it reads again at once instead of waiting.
  let woken = false;
  const stream: OpenStream = {
    stop(error) {
      if (closed) return;
      closed = true;
      wake?.();
      if (error !== undefined) raw.write(errorFrame(error));
      raw.end();
    },
  };
  const offWake = spec.wakeups.on(wakeTopics.run(runId), () => {
    woken = true;
    wake?.();
  });
  // Wake-ups stopped arriving: read now, then every `pollMs` until they are back (which wakes every subscriber).
  const offLost =
    spec.wakeups.onLost?.(() => {
      woken = true;
      wake?.();
    }) ?? (() => {});
  const offEnd = spec.endWhen?.(stream.stop) ?? (() => {});
  raw.on('close', () => {
    closed = true;
    wake?.();
  });
  spec.open.add(stream);
  const write = async (text: string) => {
    if (closed) return;
    if (!raw.write(text))
      await new Promise<void>((resolve) => {
        const done = () => {
          raw.off('drain', done);
          raw.off('close', done);
          resolve();
        };
        raw.on('drain', done);
        raw.on('close', done);
      });
  };
  let after = spec.after;
  let lastWrite = Date.now();
  // When the run's watch mark was last renewed (Date.now() before the statement): its appends wake `run:<id>` only
  // while it is marked (decision 0365), so the mark is taken before the first read and renewed before a read once
  // RUN_WATCH_RENEW_MS passed; the wait below ends by then.
  let watchedAt = Number.NEGATIVE_INFINITY;
  try {
    await write(': stream of run events\n\n');
    while (!closed) {
      woken = false;
      if (!spec.ended && Date.now() - watchedAt >= RUN_WATCH_RENEW_MS) {
        const at = Date.now();
        await engine.watchRun(runId);
        watchedAt = at;
      }
      const events = await engine.listEvents(namespace, runId, after, STREAM_PAGE, spec.viewer);
      for (const event of events) {
        await write(format(event));
        after = event.seq;
        if (TERMINAL_EVENTS.has(event.type)) return;
      }
      // A full page: more are stored, read them now (each page is written out before the next is read).
      if (events.length === STREAM_PAGE) {
        lastWrite = Date.now();
        continue;
      }
      if (spec.ended) return;
      const now = Date.now();
      if (events.length > 0) lastWrite = now;
      else if (now - lastWrite >= timing.keepAliveMs) {
        await write(': keep-alive\n\n');
        lastWrite = now;
      }
      if (woken) continue;
      const keepAliveIn = Math.max(0, lastWrite + timing.keepAliveMs - Date.now());
      // The keep-alive's time, or the mark's renewal if sooner.
      const deadline = Math.min(keepAliveIn, Math.max(0, watchedAt + RUN_WATCH_RENEW_MS - Date.now()));
      await new Promise<void>((resolve) => {
        // The fallback read only while wake-ups are not listening (as every waiter's); the deadline's time always.
        const timer = setTimeout(resolve, spec.wakeups.listening ? deadline : Math.min(timing.pollMs, deadline));
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
  } catch (error) {
    // The answer has started, so a failure can only be told as an event of its own before closing.
    if (!isMtError(error)) request.log.error({ err: error }, 'run event stream failed');
    await write(isMtError(error) ? errorFrame(error) : INTERNAL_ERROR_FRAME);
  } finally {
    offWake();
    offLost();
    offEnd();
    spec.open.delete(stream);
    if (!closed) {
      closed = true;
      raw.end();
    }
  }
}
