import { randomUUID } from 'node:crypto';
import type { ToolCallInput, ToolCallResult } from '@maitento/gateway';
import type { Connector, Tool } from '@maitento/lang';
import type { StoredVersion } from '@maitento/store';
import type { ServerContext } from '../server/context.js';

/** A tool called directly (REST or MCP), as the store loaded it. */
export interface DirectTool {
  tool: StoredVersion<Tool>;
  connector: StoredVersion<Connector>;
}

/**
 * Makes a direct tool call (`POST /v1/extops/{name}/call`, MCP `tools/call`) traced as a run's is, when OpenTelemetry
 * is on (docs/telemetry.md): `execute_tool {tool}` (a new trace's root, or the child of the caller's `traceparent`)
 * and its `{METHOD}` child from the moment the gateway sends. Without OpenTelemetry it is `send(input)`.
 */
export async function tracedCall(
  ctx: ServerContext,
  loaded: DirectTool,
  input: ToolCallInput,
  send: (input: ToolCallInput) => Promise<ToolCallResult>,
  call: { traceparent?: string | undefined; callId?: string | undefined; arguments?: unknown },
): Promise<ToolCallResult> {
  if (ctx.telemetry === undefined) return send(input);
  const span = ctx.telemetry.directTool(
    { tool: loaded.tool.resource, connector: loaded.connector.resource },
    { callId: call.callId ?? randomUUID(), version: loaded.tool.version, traceparent: call.traceparent },
  );
  const outer = input.onSend;
  input.onSend = () => {
    span.sending();
    outer?.();
  };
  try {
    const result = await send(input);
    span.end(result, call.arguments);
    return result;
  } catch (error) {
    span.end({ ok: false, code: 'api:server:internal', error: 'internal error' }, call.arguments);
    throw error;
  }
}
