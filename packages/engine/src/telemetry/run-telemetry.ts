import { createHash } from 'node:crypto';
import {
  type Attributes,
  type Context,
  type Link,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  trace,
} from '@opentelemetry/api';
import type { ApprovalRecord, RunRecord } from '@maitento/store';
import type { InteractionTool } from '@maitento/lang';
import { type ToolCallResult, toolResultText } from '@maitento/gateway';
import { ATTR, OPERATION, TOOL_TYPE_EXTENSION } from './attributes.js';
import type { TelemetryProviders } from './provider.js';

/** The ids a run's trace is known by, stored on the run when it starts (migration 16). */
export interface RunTraceIds {
  traceId: string;
  rootSpanId: string;
  /** The span of an incoming `traceparent` the run's root span is a child of; null for a new trace. */
  parentSpanId: string | null;
}

/** What the telemetry reads of a run as a worker executes it. */
export interface TracedRun {
  run: RunRecord;
  /** `provider:model` of the run's agent. */
  model: string;
  /** The agent's name in the interaction. */
  agentName: string;
}

/** The model call's outcome, as the chat span records it. */
export interface ChatOutcome {
  responseId?: string;
  finishReason?: string;
  inputTokens: number | null;
  outputTokens: number | null;
  /** Its cost in USD by the price table, or null when it has no price for the model. */
  costUsd?: number | null;
}

/** One model call being traced. */
export interface ChatSpan {
  end(outcome: ChatOutcome): void;
  fail(errorType: string): void;
}

/** One tool call being traced: `sending` is handed to the gateway (its HTTP request starts), `end` takes the result. */
export interface ToolSpan {
  sending: () => void;
  /** The call's result (and the model's arguments, captured only with `MAITENTO_OTEL_CAPTURE_CONTENT=true`). */
  end(result: ToolCallResult | { ok: false; code: string; error: string }, args?: unknown): void;
}

/** How an approval ended, as `maitento.approval.decision` says it. */
export type ApprovalDecision = 'approved' | 'rejected' | 'expired';

const seconds = (ms: number) => ms / 1000;

function split(model: string): { provider: string; name: string } {
  const at = model.indexOf(':');
  return at < 0 ? { provider: model, name: model } : { provider: model.slice(0, at), name: model.slice(at + 1) };
}

/** An approval's span id: derived from its id, so any process emits it alike and the call after links to it. */
export function approvalSpanId(approvalId: string): string {
  return createHash('sha256').update(`approval:${approvalId}`).digest('hex').slice(0, 16);
}

// The method, host and URL template a connector's request goes to (never a filled URL).
function httpTarget(tool: Pick<InteractionTool, 'connector'>): {
  method: string;
  template: string;
  host: string;
  port?: number;
} {
  const template = tool.connector.mcp?.url ?? tool.connector.url;
  const method = tool.connector.mcp === undefined ? tool.connector.method : 'POST';
  try {
    const url = new URL(template.replace(/\{[^}]*\}/g, 'x'));
    return { method, template, host: url.hostname, port: url.port === '' ? undefined : Number(url.port) };
  } catch {
    return { method, template, host: '' };
  }
}

// Every text value of the run's inputs (prompts, bindings, secret ids), longest first: masked out of captured content.
function inputTexts(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') {
    if (value.length >= 3) out.push(value);
  } else if (typeof value === 'number' || typeof value === 'boolean') {
    if (String(value).length >= 3) out.push(String(value));
  } else if (Array.isArray(value)) {
    for (const item of value) inputTexts(item, out);
  } else if (typeof value === 'object' && value !== null) {
    for (const item of Object.values(value)) inputTexts(item, out);
  }
  return out;
}

function masked(text: string, inputs: Record<string, unknown>): string {
  let out = text;
  for (const value of inputTexts(inputs).sort((a, b) => b.length - a.length)) out = out.replaceAll(value, '[input]');
  return out;
}

/**
 * The spans and metrics of runs (docs/telemetry.md): the engine holds one when OpenTelemetry is on, and the loop's
 * hooks call it; with OpenTelemetry off there is none and the hooks are `undefined?.()`.
 */
export class RunTelemetry {
  constructor(private readonly otel: TelemetryProviders) {}

  /** The ids of a new run's trace: a new trace, or the incoming `traceparent`'s (then the root is its child). */
  allocate(traceparent?: string): RunTraceIds | undefined {
    if (this.otel.tracer === undefined) return undefined;
    const parent = traceparent === undefined ? undefined : this.otel.parseTraceparent(traceparent);
    return {
      traceId: parent?.traceId ?? this.otel.ids.randomTraceId(),
      rootSpanId: this.otel.ids.randomSpanId(),
      parentSpanId: parent?.spanId ?? null,
    };
  }

  // The run's root span as a parent (it is emitted only when the run ends).
  #rootContext(run: RunRecord): Context | undefined {
    if (run.traceId === null || run.rootSpanId === null) return undefined;
    return trace.setSpanContext(ROOT_CONTEXT, {
      traceId: run.traceId,
      spanId: run.rootSpanId,
      traceFlags: TraceFlags.SAMPLED,
      isRemote: true,
    });
  }

  // Starts a span with the ids given (those its children already name), then clears them.
  #startPreset(
    name: string,
    spanId: string,
    parent: Context,
    options: Parameters<NonNullable<TelemetryProviders['tracer']>['startSpan']>[1],
    traceId?: string,
  ): Span {
    const tracer = this.otel.tracer!;
    this.otel.ids.preset(spanId, traceId);
    try {
      return tracer.startSpan(name, options, parent);
    } finally {
      this.otel.ids.clear();
    }
  }

  /** A model call of the run: `chat {model}` (CLIENT) under the run's root. */
  chat(traced: TracedRun): ChatSpan {
    const started = performance.now();
    const { provider, name } = split(traced.model);
    const attributes: Attributes = {
      [ATTR.operationName]: OPERATION.chat,
      [ATTR.providerName]: provider,
      [ATTR.requestModel]: name,
    };
    const parent = this.#rootContext(traced.run);
    const span = parent && this.otel.tracer?.startSpan(`chat ${name}`, { kind: SpanKind.CLIENT, attributes }, parent);
    const h = this.otel.histograms;
    return {
      end: (outcome) => {
        h.operationDuration.record(seconds(performance.now() - started), attributes);
        if (outcome.inputTokens !== null)
          h.tokenUsage.record(outcome.inputTokens, { ...attributes, [ATTR.tokenType]: 'input' });
        if (outcome.outputTokens !== null)
          h.tokenUsage.record(outcome.outputTokens, { ...attributes, [ATTR.tokenType]: 'output' });
        if (span === undefined) return;
        if (outcome.responseId !== undefined) span.setAttribute(ATTR.responseId, outcome.responseId);
        if (outcome.finishReason !== undefined) span.setAttribute(ATTR.responseFinishReasons, [outcome.finishReason]);
        if (outcome.inputTokens !== null) span.setAttribute(ATTR.usageInputTokens, outcome.inputTokens);
        if (outcome.outputTokens !== null) span.setAttribute(ATTR.usageOutputTokens, outcome.outputTokens);
        if (outcome.costUsd != null) span.setAttribute(ATTR.usageCostUsd, outcome.costUsd);
        span.end();
      },
      fail: (errorType) => {
        h.operationDuration.record(seconds(performance.now() - started), {
          ...attributes,
          [ATTR.errorType]: errorType,
        });
        if (span === undefined) return;
        span.setAttribute(ATTR.errorType, errorType);
        span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
      },
    };
  }

  /**
   * A tool call: `execute_tool {tool}` (INTERNAL) under the root, linked to the approval that let it be made, and
   * its HTTP request `{METHOD}` (CLIENT) from the moment the gateway sends it.
   */
  tool(traced: TracedRun, tool: InteractionTool, callId: string, approvalId?: string): ToolSpan {
    const toolName = tool.tool.name;
    const version = traced.run.versions.find((pin) => pin.kind === 'tool' && pin.name === toolName)?.version;
    const parent = this.#rootContext(traced.run);
    const links: Link[] =
      approvalId === undefined || traced.run.traceId === null
        ? []
        : [
            {
              context: {
                traceId: traced.run.traceId,
                spanId: approvalSpanId(approvalId),
                traceFlags: TraceFlags.SAMPLED,
                isRemote: true,
              },
            },
          ];
    return this.#toolSpan(tool, { callId, version, links }, parent, traced.run.inputs);
  }

  /**
   * A tool called directly, outside a run (`POST /v1/extops/{name}/call`, MCP `tools/call`): `execute_tool {tool}`
   * (INTERNAL) as the root of a new trace, or the child of the caller's `traceparent`, with its `{METHOD}` child as in
   * runs. Without a run there are no run inputs to mask; the result is the gateway's, secrets already masked.
   */
  directTool(
    tool: Pick<InteractionTool, 'tool' | 'connector'>,
    call: { callId: string; version?: number; traceparent?: string | undefined },
  ): ToolSpan {
    const incoming = call.traceparent === undefined ? undefined : this.otel.parseTraceparent(call.traceparent);
    const parent =
      incoming === undefined
        ? ROOT_CONTEXT
        : trace.setSpanContext(ROOT_CONTEXT, {
            traceId: incoming.traceId,
            spanId: incoming.spanId,
            traceFlags: TraceFlags.SAMPLED,
            isRemote: true,
          });
    return this.#toolSpan(tool, { callId: call.callId, version: call.version, links: [] }, parent, {});
  }

  #toolSpan(
    tool: Pick<InteractionTool, 'tool' | 'connector'>,
    call: { callId: string; version: number | undefined; links: Link[] },
    parent: Context | undefined,
    inputs: Record<string, unknown>,
  ): ToolSpan {
    const started = performance.now();
    const toolName = tool.tool.name;
    const span =
      parent &&
      this.otel.tracer?.startSpan(
        `execute_tool ${toolName}`,
        {
          kind: SpanKind.INTERNAL,
          links: call.links,
          attributes: {
            [ATTR.operationName]: OPERATION.executeTool,
            [ATTR.toolName]: toolName,
            [ATTR.toolCallId]: call.callId,
            [ATTR.toolType]: TOOL_TYPE_EXTENSION,
            ...(call.version === undefined ? {} : { [ATTR.toolVersion]: call.version }),
          },
        },
        parent,
      );
    let http: Span | undefined;
    const target = span === undefined ? undefined : httpTarget(tool);
    return {
      sending: () => {
        if (span === undefined || target === undefined || http !== undefined) return;
        http = this.otel.tracer?.startSpan(
          target.method,
          {
            kind: SpanKind.CLIENT,
            attributes: {
              [ATTR.httpRequestMethod]: target.method,
              [ATTR.serverAddress]: target.host,
              ...(target.port === undefined ? {} : { [ATTR.serverPort]: target.port }),
              [ATTR.urlTemplate]: target.template,
            },
          },
          trace.setSpan(ROOT_CONTEXT, span),
        );
      },
      end: (result, args) => {
        const status = 'status' in result ? (result.status ?? undefined) : undefined;
        const errorType = result.ok
          ? undefined
          : (result.code ?? (status !== undefined && status >= 400 ? String(status) : 'error'));
        this.otel.histograms.executeToolDuration.record(seconds(performance.now() - started), {
          [ATTR.operationName]: OPERATION.executeTool,
          [ATTR.toolName]: toolName,
          ...(errorType === undefined ? {} : { [ATTR.errorType]: errorType }),
        });
        if (http !== undefined) {
          if (status !== undefined) http.setAttribute(ATTR.httpResponseStatusCode, status);
          // An MCP tools/call answers no HTTP status of its own: only its failure is an error.
          if (status === undefined ? !result.ok : status >= 400) {
            http.setAttribute(ATTR.errorType, status === undefined ? (result.code ?? 'error') : String(status));
            http.setStatus({ code: SpanStatusCode.ERROR });
          }
          http.end();
        }
        if (span === undefined) return;
        if (errorType !== undefined) {
          span.setAttribute(ATTR.errorType, errorType);
          span.setStatus({ code: SpanStatusCode.ERROR });
        }
        if (this.otel.captureContent) {
          span.setAttribute(ATTR.toolCallArguments, masked(JSON.stringify(args ?? {}), inputs));
          span.setAttribute(ATTR.toolCallResult, masked(toolResultText(result), inputs));
        }
        span.end();
      },
    };
  }

  /**
   * A wait for a person, ended: `await_approval {tool}` (INTERNAL) under the root, from the approval's creation to
   * its answer, with the span id the call after it links to. No reason text.
   */
  approvalEnded(traced: TracedRun, approval: ApprovalRecord, decision: ApprovalDecision): void {
    const end = new Date(approval.answeredAt ?? approval.expiresAt ?? Date.now());
    const start = new Date(approval.createdAt);
    this.otel.histograms.approvalWait.record(Math.max(0, seconds(end.getTime() - start.getTime())), {
      [ATTR.toolName]: approval.functionName,
      [ATTR.approvalDecision]: decision,
    });
    const parent = this.#rootContext(traced.run);
    if (parent === undefined || this.otel.tracer === undefined) return;
    const span = this.#startPreset(`await_approval ${approval.functionName}`, approvalSpanId(approval.id), parent, {
      kind: SpanKind.INTERNAL,
      startTime: start,
      attributes: {
        [ATTR.toolName]: approval.functionName,
        [ATTR.approvalId]: approval.id,
        [ATTR.approvalDecision]: decision,
      },
    });
    if (decision !== 'approved') span.setStatus({ code: SpanStatusCode.ERROR });
    span.end(end);
  }

  /**
   * The run ended: its root span `invoke_agent {agent}` (INTERNAL) is emitted now, with the run's start time and the
   * ids stored when it started, whichever process that was.
   */
  runEnded(traced: TracedRun, errorType?: string): void {
    const { run } = traced;
    const { provider, name } = split(traced.model);
    const attributes: Attributes = {
      [ATTR.operationName]: OPERATION.invokeAgent,
      [ATTR.providerName]: provider,
      [ATTR.agentName]: traced.agentName,
      [ATTR.requestModel]: name,
    };
    const start = new Date(run.createdAt);
    this.otel.histograms.invokeAgentDuration.record(Math.max(0, seconds(Date.now() - start.getTime())), {
      ...attributes,
      ...(errorType === undefined ? {} : { [ATTR.errorType]: errorType }),
    });
    if (run.traceId === null || run.rootSpanId === null || this.otel.tracer === undefined) return;
    const parent =
      run.traceParentSpanId === null
        ? ROOT_CONTEXT
        : trace.setSpanContext(ROOT_CONTEXT, {
            traceId: run.traceId,
            spanId: run.traceParentSpanId,
            traceFlags: TraceFlags.SAMPLED,
            isRemote: true,
          });
    const span = this.#startPreset(
      `invoke_agent ${traced.agentName}`,
      run.rootSpanId,
      parent,
      {
        kind: SpanKind.INTERNAL,
        startTime: start,
        attributes: { ...attributes, [ATTR.conversationId]: run.id },
      },
      run.traceParentSpanId === null ? run.traceId : undefined,
    );
    if (errorType !== undefined) {
      span.setAttribute(ATTR.errorType, errorType);
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end();
  }

  #stopped: Promise<void> | undefined;

  /** Exports what is left (at most 4 s) and stops; a second call waits for the first. */
  shutdown(): Promise<void> {
    this.#stopped ??= this.otel.shutdown();
    return this.#stopped;
  }
}
