// The wire formats of the two fake model servers: how a request body is read into a provider-neutral
// view, and how a scripted answer is written as an OpenAI Chat Completions or Anthropic Messages response.
import type { ServerResponse } from 'node:http';

/** Which API a fake model server speaks. */
export type FakeModelProvider = 'openai' | 'anthropic';

/** A tool as the model was offered it. */
export interface FakeModelTool {
  name: string;
  description: string | undefined;
  /** The JSON Schema of its arguments (`function.parameters` / `input_schema`). */
  inputSchema: unknown;
}

/** A tool call the model made earlier in the conversation. */
export interface FakeModelSeenToolCall {
  id: string;
  name: string;
  /** The arguments, parsed from JSON (OpenAI) or as sent (Anthropic). */
  arguments: unknown;
}

/** A tool result the model was sent. */
export interface FakeModelToolResult {
  toolCallId: string;
  /** The tool's name, found from the call with the same id; undefined when no such call was sent. */
  toolName: string | undefined;
  /** The result as text (Anthropic text blocks joined). */
  content: string;
  /** Anthropic's `is_error`; undefined for OpenAI, which has no such flag. */
  isError: boolean | undefined;
}

/** A provider-neutral reading of a request body, for scripts and assertions. */
export interface FakeModelConversation {
  model: string | undefined;
  stream: boolean;
  system: string;
  /** Every user text, in order. */
  userTexts: string[];
  tools: FakeModelTool[];
  toolCalls: FakeModelSeenToolCall[];
  toolResults: FakeModelToolResult[];
}

/** One tool call a scripted turn makes. */
export interface FakeToolCall {
  name: string;
  /** An object (sent as JSON) or raw text (sent as is, to script malformed arguments). */
  arguments: Record<string, unknown> | string;
  /** Defaults to a fresh id. */
  id?: string;
}

/** A successful model answer: text, tool calls, or both. */
export interface FakeAnswer {
  text?: string;
  toolCalls?: FakeToolCall[];
  /** The tokens the answer reports it used (default 11 in, 7 out). */
  usage?: { input: number; output: number };
}

const textOf = (content: unknown): string => {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((p) => p && typeof p === 'object' && (p as { type?: string }).type === 'text')
    .map((p) => String((p as { text?: unknown }).text ?? ''))
    .join('');
};

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
};

// biome-ignore lint/suspicious/noExplicitAny: request bodies are whatever the client sent
type Json = any;

/** Reads an OpenAI Chat Completions or Anthropic Messages request body into a neutral view. */
export function readConversation(provider: FakeModelProvider, body: Json): FakeModelConversation {
  const out: FakeModelConversation = {
    model: typeof body?.model === 'string' ? body.model : undefined,
    stream: body?.stream === true,
    system: provider === 'anthropic' ? textOf(body?.system) : '',
    userTexts: [],
    tools: [],
    toolCalls: [],
    toolResults: [],
  };
  const names = new Map<string, string>();
  const messages: Json[] = Array.isArray(body?.messages) ? body.messages : [];
  for (const tool of Array.isArray(body?.tools) ? body.tools : []) {
    if (provider === 'openai') {
      out.tools.push({
        name: tool?.function?.name,
        description: tool?.function?.description,
        inputSchema: tool?.function?.parameters,
      });
    } else {
      out.tools.push({ name: tool?.name, description: tool?.description, inputSchema: tool?.input_schema });
    }
  }
  for (const m of messages) {
    if (provider === 'openai') {
      if (m.role === 'system' || m.role === 'developer') out.system += (out.system ? '\n' : '') + textOf(m.content);
      if (m.role === 'user') out.userTexts.push(textOf(m.content));
      for (const call of m.role === 'assistant' ? (m.tool_calls ?? []) : []) {
        names.set(call.id, call.function?.name);
        out.toolCalls.push({ id: call.id, name: call.function?.name, arguments: parseJson(call.function?.arguments) });
      }
      if (m.role === 'tool') {
        out.toolResults.push({
          toolCallId: m.tool_call_id,
          toolName: names.get(m.tool_call_id),
          content: textOf(m.content),
          isError: undefined,
        });
      }
      continue;
    }
    const blocks: Json[] = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : (m.content ?? []);
    if (m.role === 'user') {
      const text = textOf(blocks);
      if (text) out.userTexts.push(text);
    }
    for (const b of blocks) {
      if (b?.type === 'tool_use') {
        names.set(b.id, b.name);
        out.toolCalls.push({ id: b.id, name: b.name, arguments: b.input });
      }
      if (b?.type === 'tool_result') {
        out.toolResults.push({
          toolCallId: b.tool_use_id,
          toolName: names.get(b.tool_use_id),
          content: textOf(b.content),
          isError: b.is_error,
        });
      }
    }
  }
  return out;
}

const USAGE = { input: 11, output: 7 };

/** Writes a successful answer in the provider's format, as JSON or as a Server-Sent Events stream. */
export function writeAnswer(
  provider: FakeModelProvider,
  res: ServerResponse,
  answer: FakeAnswer,
  options: { model: string; stream: boolean; nextId: () => string },
): void {
  const calls = (answer.toolCalls ?? []).map((c) => ({
    id: c.id ?? (provider === 'openai' ? `call_${options.nextId()}` : `toolu_${options.nextId()}`),
    name: c.name,
    arguments: c.arguments,
  }));
  const argsText = (a: Record<string, unknown> | string) => (typeof a === 'string' ? a : JSON.stringify(a));
  const id = options.nextId();
  if (provider === 'openai') {
    const finish = calls.length > 0 ? 'tool_calls' : 'stop';
    const toolCalls = calls.map((c) => ({
      id: c.id,
      type: 'function',
      function: { name: c.name, arguments: argsText(c.arguments) },
    }));
    const spent = answer.usage ?? USAGE;
    const usage = {
      prompt_tokens: spent.input,
      completion_tokens: spent.output,
      total_tokens: spent.input + spent.output,
    };
    const head = { id: `chatcmpl-${id}`, object: 'chat.completion', created: 1_700_000_000, model: options.model };
    if (!options.stream) {
      const message = {
        role: 'assistant',
        content: answer.text ?? null,
        tool_calls: calls.length ? toolCalls : undefined,
      };
      sendJson(res, 200, { ...head, choices: [{ index: 0, message, finish_reason: finish }], usage });
      return;
    }
    const chunk = (delta: unknown, finishReason: string | null = null) => ({
      ...head,
      object: 'chat.completion.chunk',
      choices: [{ index: 0, delta, finish_reason: finishReason }],
    });
    const events: unknown[] = [chunk({ role: 'assistant', content: answer.text ?? '' })];
    for (const [index, c] of toolCalls.entries()) events.push(chunk({ tool_calls: [{ index, ...c }] }));
    events.push(chunk({}, finish), { ...head, object: 'chat.completion.chunk', choices: [], usage });
    sendEvents(res, events.map((e) => `data: ${JSON.stringify(e)}\n\n`).concat('data: [DONE]\n\n'));
    return;
  }
  const content: Json[] = [];
  if (answer.text !== undefined) content.push({ type: 'text', text: answer.text });
  for (const c of calls) content.push({ type: 'tool_use', id: c.id, name: c.name, input: c.arguments });
  const stopReason = calls.length > 0 ? 'tool_use' : 'end_turn';
  const spent = answer.usage ?? USAGE;
  const usage = { input_tokens: spent.input, output_tokens: spent.output };
  const message = { id: `msg_${id}`, type: 'message', role: 'assistant', model: options.model };
  if (!options.stream) {
    sendJson(res, 200, { ...message, content, stop_reason: stopReason, stop_sequence: null, usage });
    return;
  }
  const events: Array<[string, unknown]> = [
    ['message_start', { type: 'message_start', message: { ...message, content: [], stop_reason: null, usage } }],
  ];
  content.forEach((block, index) => {
    const start = block.type === 'text' ? { type: 'text', text: '' } : { ...block, input: {} };
    events.push(['content_block_start', { type: 'content_block_start', index, content_block: start }]);
    const delta =
      block.type === 'text'
        ? { type: 'text_delta', text: block.text }
        : { type: 'input_json_delta', partial_json: argsText(block.input) };
    events.push(['content_block_delta', { type: 'content_block_delta', index, delta }]);
    events.push(['content_block_stop', { type: 'content_block_stop', index }]);
  });
  events.push(
    [
      'message_delta',
      { type: 'message_delta', delta: { stop_reason: stopReason }, usage: { output_tokens: spent.output } },
    ],
    ['message_stop', { type: 'message_stop' }],
  );
  sendEvents(
    res,
    events.map(([name, data]) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`),
  );
}

/** Writes an error answer in the provider's error format. */
export function writeError(provider: FakeModelProvider, res: ServerResponse, status: number, message: string): void {
  const body =
    provider === 'openai'
      ? { error: { message, type: 'server_error', param: null, code: null } }
      : { type: 'error', error: { type: 'api_error', message } };
  sendJson(res, status, body);
}

/** Writes `body` as JSON with `status`. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function sendEvents(res: ServerResponse, events: string[]): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const e of events) res.write(e);
  res.end();
}
