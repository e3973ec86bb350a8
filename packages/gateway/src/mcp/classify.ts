import type { MtError } from '@maitento/errors';
import { gatewayErrors } from '../errors.js';
import { mtErrorIn, networkCodeIn, networkReasonIn, UNDICI_TIMEOUTS } from '../internal/causes.js';
import type { Redactor } from '../steps/redact.js';
import { loadedSdk } from './sdk.js';

/** What an MCP failure is told about, to name it. */
export interface McpFailureContext {
  /** The tool called, or for a listing the server's host. */
  tool: string;
  host: string;
  operation: 'initialize' | 'tools/list' | 'tools/call';
  timedOut: boolean;
  cancelled: boolean;
  timeoutMs: number;
  redact: Redactor;
}

const MAX_REASON = 500;

function reasonOf(error: unknown, redact: Redactor): string {
  const text = error instanceof Error ? error.message : String(error);
  const masked = redact(text);
  return masked.length > MAX_REASON ? `${masked.slice(0, MAX_REASON)}...` : masked;
}

/** The HTTP status of an SDK transport error (the server answered a request of the session with it). */
export function httpStatusOf(error: unknown): number | undefined {
  const sdk = loadedSdk();
  if (sdk === undefined || !(error instanceof sdk.StreamableHTTPError)) return undefined;
  return typeof error.code === 'number' && error.code >= 100 ? error.code : undefined;
}

/**
 * The error code an MCP session's failure is reported with: the deadline and the caller's cancellation first, then
 * the egress refusal or any other MtError (a refused redirect), an HTTP status the server answered with, a JSON-RPC
 * error, a network failure; what is left came out of the SDK talking to the server (a malformed answer) and is
 * `api:gateway:mcp-error`. Every message is masked: the credential's value never appears in one.
 */
export function classifyMcpError(error: unknown, ctx: McpFailureContext): MtError {
  const { tool, host, redact } = ctx;
  const code = (error as { code?: unknown })?.code;
  if (ctx.timedOut || (typeof code === 'string' && UNDICI_TIMEOUTS.has(code))) {
    return gatewayErrors.create('api:gateway:timeout', { tool, seconds: ctx.timeoutMs / 1000 });
  }
  if (ctx.cancelled) return gatewayErrors.create('api:gateway:cancelled', { tool });
  const mtError = mtErrorIn(error);
  if (mtError !== undefined) return mtError;
  const sdk = loadedSdk();
  if (sdk !== undefined) {
    const status = httpStatusOf(error);
    if (status !== undefined && status >= 400)
      return gatewayErrors.create('api:gateway:upstream-status', { tool, status });
    if (error instanceof sdk.McpError) {
      if (error.code === sdk.ErrorCode.RequestTimeout) {
        return gatewayErrors.create('api:gateway:timeout', { tool, seconds: ctx.timeoutMs / 1000 });
      }
    }
  }
  const network = networkCodeIn(error);
  if (network !== undefined) {
    const reason = redact(networkReasonIn(error, network));
    return gatewayErrors.create('api:gateway:upstream-unreachable', { tool, host, reason });
  }
  return gatewayErrors.create('api:gateway:mcp-error', {
    tool,
    host,
    operation: ctx.operation,
    reason: reasonOf(error, redact),
  });
}
