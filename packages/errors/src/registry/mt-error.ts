/** The JSON body every API error and every tool error result uses. */
export interface ErrorBody {
  error: string;
  code: string;
}

/** An error with a stable registry code, an HTTP status and a message made from the code's template. */
export class MtError<C extends string = string> extends Error {
  /** The stable code, shaped `api:<area>:<reason>` or `mtr:<area>:<reason>`. */
  readonly code: C;
  /** The HTTP status a server answers with. */
  readonly status: number;
  /** An optional hint on how to fix it. */
  readonly hint?: string;
  /** Structured, secret-free details (for example every diagnostic of a failed deploy). */
  readonly details?: unknown;

  constructor(
    code: C,
    status: number,
    message: string,
    options: { hint?: string; details?: unknown; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'MtError';
    this.code = code;
    this.status = status;
    if (options.hint !== undefined) this.hint = options.hint;
    if (options.details !== undefined) this.details = options.details;
  }

  /** The `{ error, code }` body. */
  toJSON(): ErrorBody {
    return { error: this.message, code: this.code };
  }
}

/**
 * The mark of errors shaped like {@link MtError} from packages that do not depend on this one (the SDK,
 * which installs on its own): `error[Symbol.for('maitento.error')] === true`.
 */
export const MT_ERROR_MARK: unique symbol = Symbol.for('maitento.error');

/** True when `value` is an {@link MtError}, also across duplicated module copies and for marked errors. */
export function isMtError(value: unknown): value is MtError {
  return (
    value instanceof MtError ||
    (value instanceof Error &&
      typeof (value as MtError).code === 'string' &&
      typeof (value as MtError).status === 'number' &&
      ((value as MtError).name === 'MtError' || (value as unknown as Record<symbol, unknown>)[MT_ERROR_MARK] === true))
  );
}
