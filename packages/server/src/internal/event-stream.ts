import type { Engine, RunEvent } from '@maitento/engine';
import { isMtError } from '@maitento/errors';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** Event types after which a run's stream ends. */
const TERMINAL_EVENTS = new Set(['run-completed', 'run-failed', 'run-cancelled']);

/** How many events a stream reads at once: a long transcript is read and written out a page at a time. */
export const STREAM_PAGE = 100;

/** How often a stream asks for new events, and how long it may stay silent before a keep-alive comment. */
export interface EventStreamTiming {
  pollMs: number;
  keepAliveMs: number;
}

/** The default timing: new events within 200 ms, a keep-alive comment every 15 s of silence. */
export const DEFAULT_STREAM_TIMING: EventStreamTiming = { pollMs: 200, keepAliveMs: 15_000 };

/** One open stream, so the server can end it when it closes. */
export interface OpenStream {
  stop(): void;
}

/** What one stream serves. */
export interface RunStreamSpec {
  engine: Engine;
  namespace: string;
  runId: string;
  /** Events with `seq` above this are sent. */
  after: number;
  /** The run has already ended: send what is left and close. */
  ended: boolean;
  timing: EventStreamTiming;
  /** Open streams of the server: this one is added while it is open. */
  open: Set<OpenStream>;
}

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
 * Takes the response over and streams a run's events as Server-Sent Events: the stored ones after
 * `after` (read {@link STREAM_PAGE} at a time), then new ones as they are stored (polled every `pollMs`), until a terminal event, the client
 * going away, or the server closing. Polling stops as soon as the connection closes.
 */
export async function streamRunEvents(
  request: FastifyRequest,
  reply: FastifyReply,
  spec: RunStreamSpec,
): Promise<void> {
  const { engine, namespace, runId, timing } = spec;
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
  const stream: OpenStream = {
    stop() {
      if (closed) return;
      closed = true;
      wake?.();
      raw.end();
    },
  };
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
  try {
    await write(': stream of run events\n\n');
    while (!closed) {
      const events = await engine.listEvents(namespace, runId, after, STREAM_PAGE);
      for (const event of events) {
        await write(formatSseEvent(event));
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
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, timing.pollMs);
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
    const body = isMtError(error)
      ? { error: error.message, code: error.code, status: error.status }
      : { error: 'Internal server error', code: 'api:server:internal', status: 500 };
    await write(`event: error\ndata: ${JSON.stringify(body)}\n\n`);
  } finally {
    spec.open.delete(stream);
    if (!closed) {
      closed = true;
      raw.end();
    }
  }
}
