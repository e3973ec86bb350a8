import type { IncomingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { type ReadBody, readBody } from '../steps/read-body.js';
import { isRedirect } from '../steps/redirect.js';

/** What one request of a call answered. */
export interface HopResponse {
  statusCode: number;
  headers: IncomingHttpHeaders;
  /** The Location of a redirect to follow (its body was discarded); undefined for an answer that is the result. */
  location: string | undefined;
  /** The body read under the limit; undefined for a redirect. */
  read: ReadBody | undefined;
}

/** Bytes of a redirect's body read (and dropped) to keep the connection; past this the connection is closed. */
const REDIRECT_BODY_LIMIT = 128 * 1024;

/** The body was cut at the limit: what is left of it is not wanted, and the connection is closed. */
class CutError extends Error {}

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * One request as an undici dispatch handler: it collects the body straight into a chunk list cut at `limit` decoded
 * bytes, or hands an encoded body to {@link readBody} (bounded decompression), aborts through undici's controller
 * when the call's signal aborts, and settles one promise. No `BodyReadable` stream per request.
 */
class HopHandler implements Dispatcher.DispatchHandler {
  readonly promise: Promise<HopResponse>;
  #resolve!: (response: HopResponse) => void;
  #reject!: (error: unknown) => void;
  #settled = false;
  #controller: Dispatcher.DispatchController | undefined;
  readonly #signal: AbortSignal;
  readonly #limit: number;
  readonly #toolName: string;
  #statusCode = 0;
  #headers: IncomingHttpHeaders | undefined;
  #location: string | undefined;
  /** Set for an encoded body: its bytes go through this stream to {@link readBody}. */
  #encoded: Readable | undefined;
  #ended = false;
  #chunks: Buffer[] = [];
  #size = 0;
  #declared: number | undefined;

  constructor(signal: AbortSignal, limit: number, toolName: string) {
    this.#signal = signal;
    this.#limit = limit;
    this.#toolName = toolName;
    this.promise = new Promise<HopResponse>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    signal.addEventListener('abort', this.#onAbort);
  }

  /** The deadline passed or the call was cancelled: the request is aborted and the hop rejects with the reason. */
  readonly #onAbort = (): void => {
    const reason = this.#signal.reason;
    this.#fail(reason);
    this.#controller?.abort(reason as Error);
    this.#encoded?.destroy(reason as Error);
  };

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    // The deadline passed while the request waited for a connection: it is not sent.
    if (this.#settled) controller.abort(this.#signal.reason as Error);
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    this.#statusCode = statusCode;
    this.#headers = headers;
    if (isRedirect(statusCode)) {
      const location = firstHeader(headers.location);
      if (location !== undefined) {
        this.#location = location;
        return;
      }
    }
    const encoding = firstHeader(headers['content-encoding']);
    const lengthText = firstHeader(headers['content-length']);
    const length = lengthText === undefined ? Number.NaN : Number(lengthText);
    const declared = Number.isFinite(length) ? length : undefined;
    if (encoding === undefined || encoding.trim() === '' || encoding.trim().toLowerCase() === 'identity') {
      this.#declared = declared;
      return;
    }
    const stream = new Readable({
      read: () => controller.resume(),
      destroy: (error, callback) => {
        // readBody stops reading at the limit (or on a decoding error): the rest of the body is not fetched.
        if (!this.#ended) controller.abort(error ?? new CutError('The response body was cut at the limit.'));
        callback(error);
      },
    });
    this.#encoded = stream;
    readBody(stream, encoding, declared, this.#limit, this.#toolName).then(
      (read) => this.#succeed(read),
      (error: unknown) => this.#fail(error),
    );
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#settled) return;
    if (this.#encoded !== undefined) {
      if (!this.#encoded.push(chunk)) controller.pause();
      return;
    }
    const size = this.#size + chunk.length;
    if (this.#location !== undefined) {
      this.#size = size;
      // A redirect with a large body: closing the connection is cheaper than reading it.
      if (size > REDIRECT_BODY_LIMIT) {
        this.#succeed(undefined);
        controller.abort(new CutError('The redirect body was not read.'));
      }
      return;
    }
    if (size > this.#limit) {
      const limit = this.#limit;
      this.#chunks.push(chunk.subarray(0, limit - this.#size));
      this.#size = limit;
      const declared = this.#declared;
      this.#succeed({
        text: Buffer.concat(this.#chunks, limit).toString('utf8'),
        truncated: { limit, ...(declared === undefined ? {} : { size: declared }) },
      });
      controller.abort(new CutError('The response body was cut at the limit.'));
      return;
    }
    this.#chunks.push(chunk);
    this.#size = size;
  }

  onResponseEnd(): void {
    this.#ended = true;
    if (this.#encoded !== undefined) {
      this.#encoded.push(null);
      return;
    }
    if (this.#location !== undefined) {
      this.#succeed(undefined);
      return;
    }
    const chunks = this.#chunks;
    const text =
      chunks.length === 1
        ? chunks[0].toString('utf8')
        : chunks.length === 0
          ? ''
          : Buffer.concat(chunks, this.#size).toString('utf8');
    this.#succeed({ text });
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.#ended = true;
    this.#encoded?.destroy(error);
    this.#fail(error);
  }

  #succeed(read: ReadBody | undefined): void {
    if (this.#settled) return;
    this.#settle();
    this.#resolve({
      statusCode: this.#statusCode,
      headers: this.#headers ?? {},
      location: this.#location,
      read,
    });
  }

  #fail(error: unknown): void {
    if (this.#settled) return;
    this.#settle();
    this.#reject(error);
  }

  #settle(): void {
    this.#settled = true;
    this.#signal.removeEventListener('abort', this.#onAbort);
  }
}

/**
 * Sends one request through `dispatcher` and reads its answer until `signal` aborts: a redirect's body is dropped, any
 * other body is read up to `limit` decoded bytes. Rejects with the signal's reason, or undici's or zlib's error.
 */
export function sendHop(
  dispatcher: Dispatcher,
  request: Dispatcher.DispatchOptions,
  signal: AbortSignal,
  limit: number,
  toolName: string,
): Promise<HopResponse> {
  if (signal.aborted) return Promise.reject(signal.reason);
  const handler = new HopHandler(signal, limit, toolName);
  dispatcher.dispatch(request, handler);
  return handler.promise;
}
