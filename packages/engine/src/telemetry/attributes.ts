// Every attribute, span and metric name Maitento exports, in one place. The gen_ai.* names follow the GenAI semantic
// conventions (all Development status) as of open-telemetry/semantic-conventions-genai at commit
// 9f1b0bb4320aba1797371a60f19ab07bad938932 (docs/registry/attributes/gen-ai.md there; docs/telemetry.md): spelled out here rather than taken from @opentelemetry/semantic-conventions'
// incubating constants, which may change in a minor release. `gen_ai.system` is gone (now `gen_ai.provider.name`).

/** The semconv-genai revision these names were checked against. */
export const SEMCONV_GENAI_REVISION =
  'open-telemetry/semantic-conventions-genai@9f1b0bb4320aba1797371a60f19ab07bad938932';

export const ATTR = {
  operationName: 'gen_ai.operation.name',
  providerName: 'gen_ai.provider.name',
  agentName: 'gen_ai.agent.name',
  requestModel: 'gen_ai.request.model',
  conversationId: 'gen_ai.conversation.id',
  responseId: 'gen_ai.response.id',
  responseFinishReasons: 'gen_ai.response.finish_reasons',
  usageInputTokens: 'gen_ai.usage.input_tokens',
  usageOutputTokens: 'gen_ai.usage.output_tokens',
  tokenType: 'gen_ai.token.type',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolType: 'gen_ai.tool.type',
  toolCallArguments: 'gen_ai.tool.call.arguments',
  toolCallResult: 'gen_ai.tool.call.result',
  errorType: 'error.type',
  httpRequestMethod: 'http.request.method',
  httpResponseStatusCode: 'http.response.status_code',
  serverAddress: 'server.address',
  serverPort: 'server.port',
  urlTemplate: 'url.template',
  toolVersion: 'maitento.tool.version',
  approvalId: 'maitento.approval.id',
  /** A model call's cost in USD by the price table (MT_MODEL_PRICES); absent when it has no price for the model. */
  usageCostUsd: 'maitento.usage.cost_usd',
  approvalDecision: 'maitento.approval.decision',
} as const;

/** `gen_ai.operation.name` values. */
export const OPERATION = { invokeAgent: 'invoke_agent', chat: 'chat', executeTool: 'execute_tool' } as const;

/** `gen_ai.tool.type` of a Maitento tool: an API the agent's side calls (the spec's `extension`). */
export const TOOL_TYPE_EXTENSION = 'extension';

/** The instruments and their units. */
export const METRIC = {
  operationDuration: { name: 'gen_ai.client.operation.duration', unit: 's' },
  tokenUsage: { name: 'gen_ai.client.token.usage', unit: '{token}' },
  invokeAgentDuration: { name: 'gen_ai.invoke_agent.duration', unit: 's' },
  executeToolDuration: { name: 'gen_ai.execute_tool.duration', unit: 's' },
  approvalWait: { name: 'maitento.approval.wait', unit: 's' },
} as const;

/** The spec's bucket boundaries for GenAI durations (seconds). */
export const DURATION_BUCKETS = [
  0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];
/** The spec's bucket boundaries for token counts. */
export const TOKEN_BUCKETS = [
  1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864,
];
/** Maitento's boundaries for a wait on a person (seconds): a minute to a day. */
export const APPROVAL_WAIT_BUCKETS = [1, 10, 60, 300, 900, 1800, 3600, 14400, 43200, 86400];
