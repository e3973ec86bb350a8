import { describe, expect, it } from 'vitest';
import { api } from './helpers/api.js';
import { useRunsStack } from './helpers/stack.js';

// Two real `mt serve` processes on one PostgreSQL database: a key deleted through A ends, within a second, the run
// event stream and the MCP session (with the tools/call waiting in it for a person) that the key opened on B.
const stack = useRunsStack({ servers: 2 }, { timeoutMs: 120_000, closing: (s) => s.openai.open('key-deleted') });

/** Reads a response body to its end; resolves with the text and the moment it ended, or rejects after `ms`. */
function readToEnd(res: Response, ms: number): Promise<{ text: string; endedAt: number }> {
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = '';
  const read = (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return { text, endedAt: performance.now() };
      text += decoder.decode(value, { stream: true });
    }
  })();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      void reader.cancel().catch(() => undefined);
      reject(new Error(`the response did not end within ${ms} ms; got: ${text}`));
    }, ms);
  });
  return Promise.race([read, late]).finally(() => clearTimeout(timer));
}

/** One JSON-RPC message to B's /mcp with `key` (and the session, once there is one), as any MCP client sends it. */
function mcpPost(url: string, key: string, body: unknown, session?: string): Promise<Response> {
  return fetch(`${url}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(session === undefined ? {} : { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' }),
    },
    body: JSON.stringify(body),
  });
}

describe('a deleted key ends what it opened on every server', { timeout: 60_000 }, () => {
  it('the key deleted through A: its run stream and its MCP session on B end within 1 s', async () => {
    const [a, b] = stack.servers;
    const created = await stack.api.request('POST', '/v1/keys', { role: 'user', name: 'goes-away' });
    expect(created.status).toBe(201);
    const key: string = created.body.key;
    const onB = api(b.url, key);

    // A run that waits at the model, and its stream on B.
    const run = await onB.startRun('support-desk', { message: 'Order A-1001, where is it? [gate:key-deleted]' });
    expect(run.status, JSON.stringify(run.body)).toBe(201);
    const stream = await fetch(`${b.url}/v1/runs/${run.body.id}/stream`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(stream.status).toBe(200);
    const streamEnd = readToEnd(stream, 10_000);

    // An MCP session on B, with a tools/call waiting for a person.
    const init = await mcpPost(b.url, key, {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'e2e', version: '1' } },
    });
    expect(init.status).toBe(200);
    const session = init.headers.get('mcp-session-id') ?? '';
    expect(session).not.toBe('');
    await init.body?.cancel();
    const initialized = await mcpPost(b.url, key, { jsonrpc: '2.0', method: 'notifications/initialized' }, session);
    expect(initialized.status).toBe(202);
    // A plain tools/call (no progress token) is answered as one JSON body (docs/decisions/0032-mcp-plain-tools-call-answered-as-json.md): its headers
    // come with the answer, so the request is not awaited before the key is deleted.
    const call = mcpPost(
      b.url,
      key,
      {
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: {
          name: 'refund-order',
          arguments: { request: { amount: 7, reason: 'key test' }, additionalInputs: { 'path.orderId': 'A-1001' } },
        },
      },
      session,
    );
    const callEnd = call.then(async (res) => ({ status: res.status, ...(await readToEnd(res, 10_000)) }));
    // The call waits once its approval is stored.
    const deadline = Date.now() + 10_000;
    for (;;) {
      const pending = await stack.api.request('GET', '/v1/approvals?status=Pending');
      if (pending.body.some((x: { argumentsJson: string }) => JSON.parse(x.argumentsJson).request?.amount === 7)) break;
      if (Date.now() > deadline) throw new Error('the MCP call never asked for an approval');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }

    const deleted = await api(a.url, stack.adminKey).request('DELETE', `/v1/keys/${created.body.id}`);
    expect(deleted.status).toBe(204);
    const answeredAt = performance.now();
    const [streamEnded, callEnded] = await Promise.all([streamEnd, callEnd]);
    expect(streamEnded.endedAt - answeredAt).toBeLessThan(1000);
    expect(callEnded.endedAt - answeredAt).toBeLessThan(1000);
    // The call was not made: the session answers it with a JSON-RPC error, not a tool result.
    expect(JSON.parse(callEnded.text)).toMatchObject({ id: 2, error: { code: -32000, message: 'Connection closed' } });
    // The stream says why it ended: what the key's next request gets.
    expect(streamEnded.text).toContain('"code":"api:auth:invalid-key"');
    // The session is gone with the key.
    const after = await mcpPost(b.url, key, { jsonrpc: '2.0', id: 3, method: 'tools/list' }, session);
    expect(after.status).toBe(401);
  });
});
