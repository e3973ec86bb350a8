import { isMtError, type MtError } from '@maitento/errors';

// Errors of the network and of the other side: system errno codes (never Node's own ERR_* codes, which are
// bugs), TLS and certificate failures, a malformed HTTP answer, and undici's transport errors.
const NETWORK_CODE =
  /^(E(?!RR_)[A-Z0-9_]+|ERR_(TLS|SSL)_[A-Z0-9_]+|HPE_[A-Z0-9_]+|[A-Z_]*CERT[A-Z_]*|UNABLE_TO_[A-Z_]+|UND_ERR_[A-Z_]+)$/;
// undici codes that mean the gateway called undici wrongly: bugs, not the network.
const UNDICI_MISUSE = new Set(['UND_ERR_INVALID_ARG', 'UND_ERR_INVALID_RETURN_VALUE', 'UND_ERR_NOT_SUPPORTED']);

/** undici's codes for a connect, headers or body timeout. */
export const UNDICI_TIMEOUTS = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** The code of a network or TLS failure in `error` or its causes, or undefined when it is none (a bug). */
export function networkCodeIn(error: unknown): string | undefined {
  let current = error;
  for (let depth = 0; depth < 5 && current !== undefined && current !== null; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK_CODE.test(code) && !UNDICI_MISUSE.has(code)) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Finds an MtError (for example the egress agent's refusal at connect time) in an error or its causes. */
export function mtErrorIn(error: unknown): MtError | undefined {
  let current = error;
  for (let depth = 0; depth < 5 && current !== undefined && current !== null; depth++) {
    if (isMtError(current)) return current;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The message of the network error whose code {@link networkCodeIn} found, for a reason text. */
export function networkReasonIn(error: unknown, code: string): string {
  let current = error;
  for (let depth = 0; depth < 5 && current !== undefined && current !== null; depth++) {
    if ((current as { code?: unknown }).code === code) return `${code} ${(current as Error).message ?? ''}`.trim();
    current = (current as { cause?: unknown }).cause;
  }
  return code;
}
