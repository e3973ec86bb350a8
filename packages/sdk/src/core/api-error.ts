import { type SdkErrorCode, sdkErrors } from '../errors.js';
import type { Diagnostic } from '../wire/diagnostic.js';
import { renderTemplate } from './error-registry.js';
import { MaitentoError } from './maitento-error.js';

export { MaitentoError };

/** The JSON body of an error answer: `{ error, code }` and any extra fields (such as `diagnostics`). */
export interface ErrorResponseBody {
  error: string;
  code: string;
  [field: string]: unknown;
}

/** The server answered with an error status; `code`, `error` and every extra field of its body are kept. */
export class APIError extends MaitentoError {
  /** The server's message, as sent (`body.error`). */
  readonly error: string;
  /** The whole error body, extra fields included. */
  readonly body: ErrorResponseBody;
  /** The answer's headers. */
  readonly headers: Headers;

  constructor(status: number, body: ErrorResponseBody, headers: Headers) {
    super(body.code, status, body.error);
    this.error = body.error;
    this.body = body;
    this.headers = headers;
  }

  /** Builds the error class that matches `status`, from a parsed body (or `undefined` when there was none). */
  static fromResponse(
    status: number,
    body: unknown,
    headers: Headers,
    request: { method: string; url: string },
  ): APIError {
    const parsed = isErrorBody(body) ? body : unexpectedBody(status, body, request);
    const ErrorClass = errorClassFor(status);
    return new ErrorClass(status, parsed, headers);
  }
}

/** 400: the request was malformed. */
export class BadRequestError extends APIError {}
/** 401: no API key, or a key the server does not know. */
export class AuthenticationError extends APIError {}
/** 403: the key's role may not do this. */
export class PermissionDeniedError extends APIError {}
/** 404: no such record, or not in the key's namespace. */
export class NotFoundError extends APIError {}
/** The connect link an OAuth2 tool call refused with `api:connections:authorization-required` carries. */
export interface CallAuthorization {
  provider: string;
  endUser: string;
  /** What the connection lacks: `not connected`, `missing scopes: ...`. */
  reason: string;
  scopes: string[];
  /** The URL to hand the end user: once they have connected, make the call again. */
  url: string;
  expiresAt: string;
}

/** 409: the request conflicts with the current state (for example a disabled version). */
export class ConflictError extends APIError {
  /** With `api:connections:authorization-required` (a direct tool call): the end user's connect link. */
  get authorization(): CallAuthorization | undefined {
    const value = this.body.authorization;
    return typeof value === 'object' && value !== null ? (value as CallAuthorization) : undefined;
  }
}
/** 422: the config or the input is invalid; `diagnostics` lists every finding when the server sent them. */
export class UnprocessableEntityError extends APIError {
  /** The server's diagnostics (a refused deploy), or an empty list. */
  get diagnostics(): Diagnostic[] {
    const value = this.body.diagnostics;
    return Array.isArray(value) ? (value as Diagnostic[]) : [];
  }
}
/** 429: too many requests. */
export class RateLimitError extends APIError {}
/** 5xx: the server failed. */
export class InternalServerError extends APIError {}

/** No answer at all: the connection failed (refused, reset, unknown host). */
export class APIConnectionError extends MaitentoError {
  /** The URL that was tried. */
  readonly url: string;

  constructor(url: string, cause?: unknown, code: SdkErrorCode = 'api:sdk:connection-failed', message?: string) {
    const spec = sdkErrors.specs[code];
    super(code, spec.status, message ?? renderTemplate(spec.message, { url, reason: describeCause(cause) }), {
      hint: spec.hint,
      cause,
    });
    this.url = url;
  }
}

/** The server did not answer within the time limit. */
export class APITimeoutError extends APIConnectionError {
  constructor(url: string, timeoutMs: number) {
    const message = renderTemplate(sdkErrors.specs['api:sdk:timeout'].message, { url, timeoutMs });
    super(url, undefined, 'api:sdk:timeout', message);
  }
}

function errorClassFor(status: number): new (status: number, body: ErrorResponseBody, headers: Headers) => APIError {
  if (status === 400) return BadRequestError;
  if (status === 401) return AuthenticationError;
  if (status === 403) return PermissionDeniedError;
  if (status === 404) return NotFoundError;
  if (status === 409) return ConflictError;
  if (status === 422) return UnprocessableEntityError;
  if (status === 429) return RateLimitError;
  if (status >= 500) return InternalServerError;
  return APIError;
}

function isErrorBody(body: unknown): body is ErrorResponseBody {
  return (
    typeof body === 'object' &&
    body !== null &&
    typeof (body as ErrorResponseBody).error === 'string' &&
    typeof (body as ErrorResponseBody).code === 'string'
  );
}

function unexpectedBody(status: number, body: unknown, request: { method: string; url: string }): ErrorResponseBody {
  const code: SdkErrorCode = 'api:sdk:unexpected-response';
  const error = renderTemplate(sdkErrors.specs[code].message, { ...request, status });
  return body === undefined ? { error, code } : { error, code, raw: body };
}

/** A short reason from a fetch failure: the system error code (ECONNREFUSED) when there is one. */
function describeCause(cause: unknown): string {
  let current: unknown = cause;
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    const code = (current as NodeJS.ErrnoException).code;
    if (typeof code === 'string') return code;
    if (current.cause === undefined) return current.message;
    current = current.cause;
  }
  return current === undefined ? 'unknown error' : String(current);
}
