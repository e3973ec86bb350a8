import type { GatewayOptions } from '@maitento/gateway';

/** Where an internal error is logged: the server's logger, or the worker's. */
interface ErrorLog {
  error(obj: object, msg?: string): void;
}

/**
 * The gateway's `onInternalError` of `mt serve` and of `mt worker`: the error (with its stack) and the tool go to
 * the operator's log as `internal error in a tool call`; the caller only gets `api:gateway:internal`. `log` is
 * asked at each error, as the server's logger is made after its gateway.
 */
export function logInternalErrors(log: () => ErrorLog | undefined): NonNullable<GatewayOptions['onInternalError']> {
  return (err, { tool, runId }) =>
    log()?.error(runId === undefined ? { err, tool } : { err, tool, runId }, 'internal error in a tool call');
}
