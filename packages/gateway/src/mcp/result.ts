import type { Json } from '@maitento/lang';
import { gatewayErrors } from '../errors.js';
import type { ToolCallResult } from '../gateway/types.js';
import { type Redactor, redactCutEnd, redactJson } from '../steps/redact.js';

/** One content item of a `tools/call` result, as far as the gateway reads it. */
interface ContentItem {
  type?: unknown;
  text?: unknown;
  data?: unknown;
  mimeType?: unknown;
  uri?: unknown;
  name?: unknown;
  resource?: { uri?: unknown; mimeType?: unknown; text?: unknown; blob?: unknown };
}

/** The part of a `tools/call` result the gateway reads. */
export interface McpCallResult {
  content?: unknown;
  structuredContent?: unknown;
  isError?: unknown;
}

function base64Bytes(data: unknown): number {
  if (typeof data !== 'string') return 0;
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

function str(value: unknown, fallback: string): string {
  return typeof value === 'string' && value !== '' ? value : fallback;
}

/** A text item's text, an embedded text resource's text, or a one-line summary of anything else. */
function itemText(item: ContentItem): { text: string; isText: boolean } {
  switch (item.type) {
    case 'text':
      return { text: typeof item.text === 'string' ? item.text : '', isText: true };
    case 'image':
    case 'audio':
      return {
        text: `[${item.type} ${str(item.mimeType, 'of unknown type')}, ${base64Bytes(item.data)} bytes]`,
        isText: false,
      };
    case 'resource': {
      const resource = item.resource ?? {};
      if (typeof resource.text === 'string') return { text: resource.text, isText: true };
      const mime = str(resource.mimeType, 'of unknown type');
      return {
        text: `[resource ${str(resource.uri, '(no uri)')} ${mime}, ${base64Bytes(resource.blob)} bytes]`,
        isText: false,
      };
    }
    case 'resource_link':
      return { text: `[resource link ${str(item.uri, '(no uri)')}]`, isText: false };
    default:
      return { text: `[${typeof item.type === 'string' ? item.type : 'unknown'} content]`, isText: false };
  }
}

/** Cuts `text` at `limit` UTF-8 bytes, as an HTTP body is cut; the secret's forms are masked after the cut. */
function cut(text: string, limit: number, redact: Redactor): { body: string; truncated?: ToolCallResult['truncated'] } {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes <= limit) return { body: redact(text) };
  const kept = Buffer.from(text, 'utf8').subarray(0, limit).toString('utf8');
  return { body: redactCutEnd(redact(kept), redact), truncated: { limit, size: bytes } };
}

/**
 * A `tools/call` result as a {@link ToolCallResult}, shaped like an HTTP call's: `ok` unless `isError`, status 200
 * (the server answered), the body the model reads = the text items joined by new lines (non-text items as a
 * one-line summary such as `[image image/png, 1234 bytes]`), or `structuredContent` as JSON when there is no text;
 * cut at `limit` bytes and masked like an HTTP body. An `isError` result is `api:gateway:mcp-tool-error` with the
 * remote text as its body.
 */
export function shapeMcpResult(
  result: McpCallResult,
  names: { tool: string; remote: string },
  limit: number,
  redact: Redactor,
): ToolCallResult {
  const items = Array.isArray(result.content) ? (result.content as ContentItem[]) : [];
  const parts = items.map((item) => itemText(typeof item === 'object' && item !== null ? item : {}));
  let body: Json | string;
  let truncated: ToolCallResult['truncated'];
  const structured = result.structuredContent;
  if (!parts.some((p) => p.isText) && typeof structured === 'object' && structured !== null) {
    const text = JSON.stringify(structured);
    if (Buffer.byteLength(text, 'utf8') > limit) ({ body, truncated } = cut(text, limit, redact));
    else body = redactJson(structured as Json, redact);
  } else {
    ({ body, truncated } = cut(parts.map((p) => p.text).join('\n'), limit, redact));
  }
  const out: ToolCallResult = { ok: result.isError !== true, status: 200, body };
  if (truncated !== undefined) out.truncated = truncated;
  if (!out.ok) {
    const error = gatewayErrors.create('api:gateway:mcp-tool-error', names);
    out.error = redact(error.message);
    out.code = error.code;
  }
  return out;
}
