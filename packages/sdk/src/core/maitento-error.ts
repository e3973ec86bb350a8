/** The JSON body of every Maitento error: `{ error, code }`. */
export interface ErrorBody {
  error: string;
  code: string;
}

// The mark `isMtError` of @maitento/errors recognises (the CLI reports these errors with their code).
const MT_ERROR_MARK = Symbol.for('maitento.error');

/** Any error the SDK throws: it keeps a stable `code`, and the HTTP `status` when the server answered. */
export class MaitentoError extends Error {
  /** The stable code, shaped `api:<area>:<reason>` (the server's, or `api:sdk:*` for the client's own). */
  readonly code: string;
  /** The HTTP status of the answer, or the one the SDK's own code stands for. */
  readonly status: number;
  /** How to fix it, when known. */
  readonly hint?: string;

  constructor(code: string, status: number, message: string, options: { hint?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.status = status;
    if (options.hint !== undefined) this.hint = options.hint;
    Object.defineProperty(this, MT_ERROR_MARK, { value: true });
  }

  /** The `{ error, code }` body. */
  toJSON(): ErrorBody {
    return { error: this.message, code: this.code };
  }
}
