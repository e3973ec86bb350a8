import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createFakeOpenAI, type FakeModelRequest, type FakeModelServer, type FakeTurn } from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from './helpers/api.js';
import { runsRepoFiles } from './helpers/config-repo.js';
import { type LocalMcpServer, startLocalMcpServer } from './helpers/mcp-upstream.js';
import { startServe } from './helpers/processes.js';
import { ORDERS_SECRET, type RunsStack, startRunsStack } from './helpers/stack.js';

// OpenTelemetry of runs (docs/telemetry.md), end to end: the real `mt serve` on PostgreSQL exports to a local OTLP/HTTP
// receiver (node:http, raw request bodies kept), the model is a scripted fake OpenAI, the tools call a local upstream.

/** One request the receiver got. */
interface Received {
  path: string;
  contentType: string;
  body: Buffer;
}

/** A local OTLP/HTTP collector: answers 200 to everything and keeps every request body as received. */
interface Receiver {
  url: string;
  received: Received[];
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({
        path: req.url ?? '',
        contentType: String(req.headers['content-type'] ?? ''),
        body: Buffer.concat(chunks),
      });
      res.writeHead(200, { 'content-type': String(req.headers['content-type'] ?? 'application/json') });
      res.end(req.headers['content-type'] === 'application/json' ? '{}' : '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

type AttrValue = string | number | boolean | AttrValue[] | undefined;

interface OtlpAttribute {
  key: string;
  value: {
    stringValue?: string;
    intValue?: string | number;
    doubleValue?: number;
    boolValue?: boolean;
    arrayValue?: { values?: OtlpAttribute['value'][] };
  };
}

function attrValue(v: OtlpAttribute['value']): AttrValue {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.arrayValue !== undefined) return (v.arrayValue.values ?? []).map(attrValue);
  return undefined;
}

function attributes(list: OtlpAttribute[] | undefined): Record<string, AttrValue> {
  return Object.fromEntries((list ?? []).map((a) => [a.key, attrValue(a.value)]));
}

/** A span as OTLP/JSON carries it, its attributes read into an object. */
interface Span {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  start: bigint;
  end: bigint;
  attributes: Record<string, AttrValue>;
  links: { traceId: string; spanId: string }[];
}

const KIND = { internal: 1, client: 3 };

/** Every span of the JSON trace exports received so far. */
function jsonSpans(receiver: Receiver): Span[] {
  const spans: Span[] = [];
  for (const r of receiver.received) {
    if (r.path !== '/v1/traces' || !r.contentType.includes('json')) continue;
    const body = JSON.parse(r.body.toString('utf8'));
    for (const rs of body.resourceSpans ?? [])
      for (const ss of rs.scopeSpans ?? [])
        for (const s of ss.spans ?? [])
          spans.push({
            traceId: s.traceId,
            spanId: s.spanId,
            parentSpanId: s.parentSpanId ?? '',
            name: s.name,
            kind: s.kind,
            start: BigInt(s.startTimeUnixNano),
            end: BigInt(s.endTimeUnixNano),
            attributes: attributes(s.attributes),
            links: (s.links ?? []).map((l: { traceId: string; spanId: string }) => ({
              traceId: l.traceId,
              spanId: l.spanId,
            })),
          });
  }
  return spans;
}

async function until<T>(what: string, read: () => T | undefined, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The spans of the run's trace, once its root span (emitted when the run ends) has arrived. */
async function traceOf(receiver: Receiver, runId: string): Promise<{ root: Span; spans: Span[] }> {
  const root = await until(`the root span of run ${runId}`, () =>
    jsonSpans(receiver).find((s) => s.attributes['gen_ai.conversation.id'] === runId),
  );
  // The other spans of the trace were ended before the root, so they left in the same or an earlier batch.
  return { root, spans: jsonSpans(receiver).filter((s) => s.traceId === root.traceId) };
}

// The model: `[two]` makes two get-order calls in one turn, `[refund]` asks for a refund (which needs approval).
function script(request: FakeModelRequest): FakeTurn {
  const c = request.conversation;
  const task = c.userTexts.join('\n');
  const results = c.toolResults;
  if (task.includes('[two]')) {
    if (results.length === 0)
      return {
        toolCalls: [
          { name: 'otel-get-order', arguments: { additionalInputs: { 'path.orderId': 'A-1001' } } },
          { name: 'otel-get-order', arguments: { additionalInputs: { 'path.orderId': 'A-1002' } } },
        ],
      };
    return { text: `Both orders: ${results.map((r) => r.content).join(' / ')}` };
  }
  if (task.includes('[mcp]')) {
    if (results.length === 0) return { toolCalls: [{ name: 'otel-labels', arguments: { request: { repo: 'acme' } } }] };
    return { text: `Labels: ${results.at(-1)?.content}` };
  }
  if (task.includes('[refund]')) {
    if (results.length === 0)
      return {
        toolCalls: [
          {
            name: 'refund-order',
            arguments: { request: { amount: 40, reason: 'broken' }, additionalInputs: { 'path.orderId': 'A-7007' } },
          },
        ],
      };
    return { text: `Refund answer: ${results.at(-1)?.content}` };
  }
  return { text: 'nothing to do' };
}

/**
 * The repo of the runs stack plus the traced agent: get-order with a binding from a run input and its own secret, the
 * refund (approval), and a remote MCP server's tool.
 */
function repo(origin: string, mcpUrl: string) {
  return [
    ...runsRepoFiles({ origin }),
    { path: 'connectors/mcp/otel-labels.mtr', content: `url = "${mcpUrl}"\ntool = "list_labels"\n` },
    {
      path: 'external-operations/open-api/otel-labels.mtr',
      content: `connector = @ref("otel-labels")
guidance = "Lists the labels of a repository."
`,
    },
    {
      path: 'connectors/open-api/otel-orders-get.mtr',
      content: `method = "GET"
url = "${origin}/orders/{orderId}"
description = "One order by its id"
auth = "Header"
parameters.path = [ { name = "orderId" description = "The order id" type = "string" } ]
parameters.query = [ { name = "note" description = "A note" type = "string" required = false } ]
`,
    },
    {
      path: 'external-operations/open-api/otel-get-order.mtr',
      content: `connector = @ref("otel-orders-get")
guidance = "Looks up an order by its id."
auth = { header = "X-Api-Key" secret = @ref("otel-key") }
`,
    },
    {
      path: 'agents/otel-agent.mtr',
      content: `model = "openai:gpt-4o-mini"
instructions = "Help customers with their orders."
functions = [ { ref = @ref("otel-get-order") }, { ref = @ref("refund-order") }, { ref = @ref("otel-labels") } ]
`,
    },
    {
      path: 'interactions/one-shot/otel-run.mtr',
      content: `agent = { name = "Tracer" agent = @ref("otel-agent") }
task = "A customer writes: %%message%%"
inputs.prompts = [ { name = "message" description = "What the customer wrote" required = true } ]
inputs.functions.binding = [
  { name = "note" function = @ref("otel-get-order") agent = @ref("otel-agent") target = "note" type = "query" required = false },
]
`,
    },
  ];
}

let receiver: Receiver;
let model: FakeModelServer;
let mcp: LocalMcpServer;
let stack: RunsStack;
/** The value of secret otel-key, sent as X-Api-Key by otel-get-order. */
const SECRET = `sk-otel-${randomBytes(12).toString('hex')}`;
/** What must never leave in telemetry: a secret, a binding value, a run input. */
const secretsOf = (run: { binding: string; input: string }) => [SECRET, ORDERS_SECRET, run.binding, run.input];

const OTEL_ON = (protocol: string, capture: boolean) => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
  OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
  OTEL_METRIC_EXPORT_INTERVAL: '500',
  // Spans leave 50 ms after they end instead of the default 1 s: each trace the file waits for arrives sooner.
  OTEL_BSP_SCHEDULE_DELAY: '50',
  MAITENTO_OTEL_CAPTURE_CONTENT: capture ? 'true' : '',
  // No approval TTL (the expiry test sets one for itself).
  MT_APPROVAL_TTL: '',
});

/** Stops the server and starts another on the same database with these variables changed. */
async function restartServe(changes: Record<string, string>): Promise<number> {
  const old = stack.servers[0]!;
  // SIGTERM, and the time until it exited (killed only if it is still there after 15 s).
  const begin = Date.now();
  const exited = new Promise((resolve) => old.child.once('exit', resolve));
  old.child.kill('SIGTERM');
  const killer = setTimeout(() => old.child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(killer);
  const stoppedIn = Date.now() - begin;
  expect(old.child.signalCode, `mt serve had to be killed:\n${old.log()}`).not.toBe('SIGKILL');
  Object.assign(stack.env, changes);
  const next = await startServe(stack.home, stack.env);
  stack.servers[0] = next;
  stack.api = api(next.url, stack.adminKey);
  return stoppedIn;
}

/**
 * Makes sure the server runs with these variables: restarts it (as {@link restartServe}) only when one of them differs
 * from what the running server was started with. Every variable is read at start, so a server started with the same
 * values is the same server as a new one would be, less a start (~2 s of CPU).
 */
async function serveWith(changes: Record<string, string>): Promise<void> {
  if (Object.entries(changes).some(([name, value]) => (stack.env[name] ?? '') !== value)) await restartServe(changes);
}

/** The console's page of a run, signed in with the admin key as a person would (login form, then its cookie). */
async function consoleRunPage(runId: string): Promise<string> {
  const base = stack.api.url;
  const login = await fetch(`${base}/console/login`);
  const csrfCookie = login.headers.getSetCookie().map((c) => c.split(';')[0]!)[0]!;
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await login.text())![1]!;
  const signedIn = await fetch(`${base}/console/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: csrfCookie, origin: base },
    body: new URLSearchParams({ _csrf: csrf, key: stack.adminKey }).toString(),
  });
  expect(signedIn.status).toBe(303);
  const session = signedIn.headers
    .getSetCookie()
    .map((c) => c.split(';')[0]!)
    .find((c) => c.startsWith('mt_console_session='))!;
  const page = await fetch(`${base}/console/runs/${runId}`, { headers: { cookie: session } });
  expect(page.status).toBe(200);
  return page.text();
}

const TRACE_TEMPLATE = 'http://jaeger.test:16686/trace/{traceId}';

/** Starts a run of otel-run with fresh random values in its input and its binding; resolves once it ended. */
async function tracedRun(marker: string) {
  const values = {
    input: `input-${randomBytes(8).toString('hex')}`,
    binding: `bind-${randomBytes(8).toString('hex')}`,
  };
  const started = await stack.api.startRun('otel-run', {
    message: `Please check ${marker} ${values.input}`,
    note: values.binding,
  });
  expect(started.status, JSON.stringify(started.body)).toBe(201);
  return { id: started.body.id as string, ...values };
}

/** A run of otel-run that asks for a refund, once it waits for the person's approval. */
async function refundAwaitingApproval() {
  const run = await tracedRun('[refund]');
  const paused = await stack.api.waitForRun(run.id, (r) => r.status !== 'Running');
  expect(paused.status).toBe('PendingApproval');
  return { run, approvalId: (paused.pendingApproval as { id: string }).id };
}

/** The trace of a run that ended while it waited for an approval: its root's error type, its spans, its wait's span. */
async function approvalWaitSpan(runId: string, errorType: string): Promise<Span> {
  const { root, spans } = await traceOf(receiver, runId);
  expect(root.attributes['error.type']).toBe(errorType);
  expect(spans.map((s) => s.name).sort()).toEqual([
    'await_approval refund-order',
    'chat gpt-4o-mini',
    'invoke_agent Tracer',
  ]);
  const wait = spans.find((s) => s.name.startsWith('await_approval'))!;
  expect(wait.parentSpanId).toBe(root.spanId);
  return wait;
}

beforeAll(async () => {
  [receiver, model, mcp] = await Promise.all([
    startReceiver(),
    createFakeOpenAI({ respond: script }),
    startLocalMcpServer([
      {
        name: 'list_labels',
        description: 'Lists the labels of a repository',
        inputSchema: { type: 'object', properties: { repo: { type: 'string' } }, required: ['repo'] },
        answer: () => 'bug, feature',
      },
    ]),
  ]);
  stack = await startRunsStack({
    deploy: false,
    env: { ...OTEL_ON('http/json', true), OPENAI_BASE_URL: model.url, MT_TRACE_URL_TEMPLATE: TRACE_TEMPLATE },
  });
  await Promise.all(
    [
      ['orders-api-key', ORDERS_SECRET],
      ['otel-key', SECRET],
    ].map(async ([name, value]) => {
      const r = await stack.api.request('POST', '/v1/secrets', { name, value });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
    }),
  );
  await stack.api.deploy(repo(stack.upstream.origin, mcp.url));
}, 120_000);

afterAll(async () => {
  await stack?.close();
  await model?.close();
  await mcp?.close();
  await receiver?.close();
});

// Generous timeouts: every restart of mt serve is slow on a loaded machine.
describe('OpenTelemetry of runs', { timeout: 180_000 }, () => {
  it('a run with two tool calls is one trace of exactly this tree, with the scripted model’s tokens', async () => {
    const run = await tracedRun('[two]');
    expect((await stack.api.waitForEnd(run.id)).status).toBe('Completed');
    const { root, spans } = await traceOf(receiver, run.id);

    expect(root).toMatchObject({ name: 'invoke_agent Tracer', kind: KIND.internal, parentSpanId: '' });
    expect(root.attributes).toEqual({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.provider.name': 'openai',
      'gen_ai.agent.name': 'Tracer',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.conversation.id': run.id,
    });
    const names = spans.map((s) => s.name).sort();
    expect(names).toEqual([
      'GET',
      'GET',
      'chat gpt-4o-mini',
      'chat gpt-4o-mini',
      'execute_tool otel-get-order',
      'execute_tool otel-get-order',
      'invoke_agent Tracer',
    ]);
    const chats = spans.filter((s) => s.name.startsWith('chat '));
    for (const chat of chats) {
      expect(chat.kind).toBe(KIND.client);
      expect(chat.parentSpanId).toBe(root.spanId);
      expect(chat.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'gpt-4o-mini',
        'gen_ai.response.id': expect.stringMatching(/^chatcmpl-/),
        'gen_ai.response.finish_reasons': [expect.any(String)],
        // The fake model's usage of every answer (packages/testkit/src/fake-model-wire.ts).
        'gen_ai.usage.input_tokens': 11,
        'gen_ai.usage.output_tokens': 7,
      });
      expect(chat.attributes['error.type']).toBeUndefined();
    }
    const tools = spans.filter((s) => s.name.startsWith('execute_tool '));
    const callIds = new Set<AttrValue>();
    for (const tool of tools) {
      expect(tool.kind).toBe(KIND.internal);
      expect(tool.parentSpanId).toBe(root.spanId);
      expect(tool.attributes).toMatchObject({
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'otel-get-order',
        'gen_ai.tool.call.id': expect.any(String),
        'gen_ai.tool.type': 'extension',
        'maitento.tool.version': 1,
      });
      callIds.add(tool.attributes['gen_ai.tool.call.id']);
      const http = spans.filter((s) => s.parentSpanId === tool.spanId);
      expect(http).toHaveLength(1);
      expect(http[0]).toMatchObject({ name: 'GET', kind: KIND.client });
      expect(http[0]!.attributes).toEqual({
        'http.request.method': 'GET',
        'server.address': '127.0.0.1',
        'server.port': Number(new URL(stack.upstream.origin).port),
        'url.template': `${stack.upstream.origin}/orders/{orderId}`,
        'http.response.status_code': 200,
      });
    }
    expect(callIds.size).toBe(2);
    // The turns are in order: the second chat starts after both tool calls ended.
    const [first, second] = chats.sort((a, b) => (a.start < b.start ? -1 : 1));
    for (const tool of tools) {
      expect(tool.start >= first!.end).toBe(true);
      expect(second!.start >= tool.end).toBe(true);
    }
    for (const span of spans) expect(Object.keys(span.attributes)).not.toContain('gen_ai.system');
    // The console's run page links to the trace (MT_TRACE_URL_TEMPLATE).
    const page = await consoleRunPage(run.id);
    expect(page).toContain(`id="run-trace" href="http://jaeger.test:16686/trace/${root.traceId}"`);
  });

  it('an MCP connector’s call: execute_tool with a POST child span to the MCP server’s URL', async () => {
    const run = await tracedRun('[mcp]');
    const ended = await stack.api.waitForEnd(run.id);
    expect(ended.status, JSON.stringify(ended)).toBe('Completed');
    const { root, spans } = await traceOf(receiver, run.id);
    const call = spans.find((s) => s.name === 'execute_tool otel-labels')!;
    expect(call.parentSpanId).toBe(root.spanId);
    expect(call.attributes['error.type']).toBeUndefined();
    const http = spans.filter((s) => s.parentSpanId === call.spanId);
    expect(http).toHaveLength(1);
    expect(http[0]).toMatchObject({ name: 'POST', kind: KIND.client });
    expect(http[0]!.attributes).toEqual({
      'http.request.method': 'POST',
      'server.address': '127.0.0.1',
      'server.port': Number(new URL(mcp.url).port),
      'url.template': mcp.url,
      'http.response.status_code': 200,
    });
  });

  it('keeps an incoming traceparent: the run’s root span is its child, in its trace', async () => {
    const traceId = randomBytes(16).toString('hex');
    const parent = randomBytes(8).toString('hex');
    const res = await fetch(`${stack.api.url}/v1/interactions/otel-run/runs`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${stack.adminKey}`,
        'content-type': 'application/json',
        traceparent: `00-${traceId}-${parent}-01`,
      },
      body: JSON.stringify({ inputs: { message: 'nothing [two]' } }),
    });
    expect(res.status).toBe(201);
    const id = ((await res.json()) as { id: string }).id;
    expect((await stack.api.waitForEnd(id)).status).toBe('Completed');
    const { root, spans } = await traceOf(receiver, id);
    expect(root.traceId).toBe(traceId);
    expect(root.parentSpanId).toBe(parent);
    expect(spans).toHaveLength(7);
  });

  it('a direct tool call (REST extop call, MCP tools/call) is traced: execute_tool, root or under traceparent, with its GET', async () => {
    const args = { additionalInputs: { 'path.orderId': 'A-1001' } };
    const rest = (traceparent?: string) =>
      fetch(`${stack.api.url}/v1/extops/otel-get-order/call`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${stack.adminKey}`,
          'content-type': 'application/json',
          ...(traceparent === undefined ? {} : { traceparent }),
        },
        body: JSON.stringify({ arguments: args }),
      });
    // The HTTP child of a direct call: the same attributes as in runs, the URL's template only.
    const expectHttpChild = (call: Span) => {
      const http = jsonSpans(receiver).filter((s) => s.parentSpanId === call.spanId);
      expect(http).toHaveLength(1);
      expect(http[0]).toMatchObject({ name: 'GET', kind: KIND.client, traceId: call.traceId });
      expect(http[0]!.attributes).toEqual({
        'http.request.method': 'GET',
        'server.address': '127.0.0.1',
        'server.port': Number(new URL(stack.upstream.origin).port),
        'url.template': `${stack.upstream.origin}/orders/{orderId}`,
        'http.response.status_code': 200,
      });
    };
    const toolAttributes = {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'otel-get-order',
      'gen_ai.tool.call.id': expect.any(String),
      'gen_ai.tool.type': 'extension',
      'maitento.tool.version': 1,
    };
    const known = new Set(jsonSpans(receiver).map((s) => s.spanId));
    const newCalls = () =>
      jsonSpans(receiver).filter((s) => !known.has(s.spanId) && s.name === 'execute_tool otel-get-order');

    // REST, without a traceparent: the root of a trace of its own.
    const plain = await rest();
    expect(plain.status).toBe(200);
    expect(((await plain.json()) as { ok: boolean }).ok).toBe(true);
    const root = await until('the plain call’s span', () => newCalls()[0]);
    expect(root).toMatchObject({ kind: KIND.internal, parentSpanId: '', links: [] });
    expect(root.attributes).toMatchObject(toolAttributes);
    expectHttpChild(root);
    for (const s of newCalls()) known.add(s.spanId);

    // REST with a traceparent: the call's span is its child, in its trace.
    const traceId = randomBytes(16).toString('hex');
    const parent = randomBytes(8).toString('hex');
    const under = await rest(`00-${traceId}-${parent}-01`);
    expect(under.status).toBe(200);
    const child = await until('the traced call’s span', () => newCalls().find((s) => s.traceId === traceId));
    expect(child).toMatchObject({ kind: KIND.internal, parentSpanId: parent });
    expect(child.attributes).toMatchObject(toolAttributes);
    expectHttpChild(child);
    known.add(child.spanId);

    // MCP tools/call, with the traceparent on its HTTP request.
    const mcpTrace = randomBytes(16).toString('hex');
    const mcpParent = randomBytes(8).toString('hex');
    const client = new Client({ name: 'telemetry-test', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${stack.api.url}/mcp`), {
        requestInit: {
          headers: { authorization: `Bearer ${stack.adminKey}`, traceparent: `00-${mcpTrace}-${mcpParent}-01` },
        },
      }),
    );
    try {
      const result = await client.callTool({ name: 'otel-get-order', arguments: args });
      expect(result.isError, JSON.stringify(result)).toBeFalsy();
    } finally {
      await client.close();
    }
    const viaMcp = await until('the MCP call’s span', () => newCalls().find((s) => s.traceId === mcpTrace));
    expect(viaMcp).toMatchObject({ kind: KIND.internal, parentSpanId: mcpParent });
    expect(viaMcp.attributes).toMatchObject(toolAttributes);
    expectHttpChild(viaMcp);

    // Capture is on in this server: the result is there, the tool's secret (sent upstream as X-Api-Key) is not.
    expect(root.attributes['gen_ai.tool.call.result']).toContain('A-1001');
    const everything = Buffer.concat(receiver.received.map((r) => r.body));
    expect(everything.includes(SECRET)).toBe(false);
    expect(everything.includes(stack.adminKey)).toBe(false);
  });

  it('an mt serve restarted while an approval waits: the same trace, the approval under the root, the call linked to it', async () => {
    const run = await tracedRun('[refund]');
    const paused = await stack.api.waitForRun(run.id, (r) => r.status !== 'Running');
    expect(paused.status).toBe('PendingApproval');
    const approvalId = (paused.pendingApproval as { id: string }).id;
    // The first chat was made by this process; the rest of the run by the next one.
    await restartServe({});
    const answered = await stack.api.request('POST', `/v1/approvals/${approvalId}/approve`, {});
    expect(answered.status, JSON.stringify(answered.body)).toBe(200);
    expect((await stack.api.waitForEnd(run.id)).status).toBe('Completed');

    const { root, spans } = await traceOf(receiver, run.id);
    expect(spans.map((s) => s.name).sort()).toEqual([
      'POST',
      'await_approval refund-order',
      'chat gpt-4o-mini',
      'chat gpt-4o-mini',
      'execute_tool refund-order',
      'invoke_agent Tracer',
    ]);
    // One trace id across both processes: every span of the run is in the root's trace, under the stored root id.
    for (const s of spans.filter((x) => x.spanId !== root.spanId && x.name !== 'POST'))
      expect(s.parentSpanId).toBe(root.spanId);
    const wait = spans.find((s) => s.name === 'await_approval refund-order')!;
    expect(wait.kind).toBe(KIND.internal);
    expect(wait.attributes).toEqual({
      'gen_ai.tool.name': 'refund-order',
      'maitento.approval.id': approvalId,
      'maitento.approval.decision': 'approved',
    });
    const call = spans.find((s) => s.name === 'execute_tool refund-order')!;
    expect(call.links).toEqual([{ traceId: root.traceId, spanId: wait.spanId }]);
    expect(call.start >= wait.end).toBe(true);
    // The root starts when the run was stored: before the first process's first chat.
    const chats = spans.filter((s) => s.name.startsWith('chat ')).sort((a, b) => (a.start < b.start ? -1 : 1));
    expect(root.start <= chats[0]!.start).toBe(true);
    expect(wait.start >= chats[0]!.end).toBe(true);
  });

  it('a rejection: decision rejected, no execute_tool for that call, a new chat follows; the reason is never sent', async () => {
    const reason = `reason-${randomBytes(8).toString('hex')}`;
    const run = await tracedRun('[refund]');
    const paused = await stack.api.waitForRun(run.id, (r) => r.status !== 'Running');
    expect(paused.status).toBe('PendingApproval');
    const approvalId = (paused.pendingApproval as { id: string }).id;
    const answered = await stack.api.request('POST', `/v1/approvals/${approvalId}/reject`, { reason });
    expect(answered.status, JSON.stringify(answered.body)).toBe(200);
    expect((await stack.api.waitForEnd(run.id)).status).toBe('Completed');
    const { root, spans } = await traceOf(receiver, run.id);
    expect(spans.map((s) => s.name).sort()).toEqual([
      'await_approval refund-order',
      'chat gpt-4o-mini',
      'chat gpt-4o-mini',
      'invoke_agent Tracer',
    ]);
    const wait = spans.find((s) => s.name.startsWith('await_approval'))!;
    expect(wait.parentSpanId).toBe(root.spanId);
    expect(wait.attributes['maitento.approval.decision']).toBe('rejected');
    const last = spans.filter((s) => s.name.startsWith('chat ')).sort((a, b) => (a.start < b.start ? -1 : 1))[1]!;
    expect(last.start >= wait.end).toBe(true);
    const all = Buffer.concat(receiver.received.map((r) => r.body));
    expect(all.includes(reason)).toBe(false);
  });

  it('a run cancelled while it waits: its approval span (expired) and its root span (cancelled) are emitted', async () => {
    const { run, approvalId } = await refundAwaitingApproval();
    const cancelled = await stack.api.request('POST', `/v1/runs/${run.id}/cancel`, {});
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    const wait = await approvalWaitSpan(run.id, 'cancelled');
    expect(wait.attributes).toMatchObject({
      'maitento.approval.id': approvalId,
      'maitento.approval.decision': 'expired',
    });
  });

  it('metrics arrive with their units, bucket boundaries and attributes, none carrying a run id', async () => {
    await until('metrics with the cancelled run’s approval wait', () =>
      receiver.received.some((r) => r.path === '/v1/metrics' && r.body.includes('"expired"')) ? true : undefined,
    );
    const runIds = (await stack.api.request<{ runs: { id: string }[] }>('GET', '/v1/runs?limit=200')).body.runs.map(
      (r) => r.id,
    );
    expect(runIds.length).toBeGreaterThan(0);
    const seen = new Map<string, { unit: string; bounds: number[]; attributes: Record<string, AttrValue>[] }>();
    for (const r of receiver.received) {
      if (r.path !== '/v1/metrics') continue;
      const body = JSON.parse(r.body.toString('utf8'));
      for (const rm of body.resourceMetrics ?? [])
        for (const sm of rm.scopeMetrics ?? [])
          for (const m of sm.metrics ?? []) {
            const entry = seen.get(m.name) ?? { unit: m.unit, bounds: [], attributes: [] };
            for (const p of m.histogram?.dataPoints ?? []) {
              entry.bounds = p.explicitBounds;
              entry.attributes.push(attributes(p.attributes));
            }
            seen.set(m.name, entry);
          }
    }
    const durationBuckets = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];
    expect(seen.get('gen_ai.client.operation.duration')).toMatchObject({ unit: 's', bounds: durationBuckets });
    expect(seen.get('gen_ai.client.token.usage')).toMatchObject({
      unit: '{token}',
      bounds: [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864],
    });
    expect(seen.get('gen_ai.invoke_agent.duration')).toMatchObject({ unit: 's', bounds: durationBuckets });
    expect(seen.get('gen_ai.execute_tool.duration')).toMatchObject({ unit: 's', bounds: durationBuckets });
    expect(seen.get('maitento.approval.wait')?.unit).toBe('s');
    const tokenTypes = new Set(seen.get('gen_ai.client.token.usage')!.attributes.map((a) => a['gen_ai.token.type']));
    expect([...tokenTypes].sort()).toEqual(['input', 'output']);
    expect(seen.get('gen_ai.client.operation.duration')!.attributes).toContainEqual({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-4o-mini',
    });
    expect(seen.get('gen_ai.execute_tool.duration')!.attributes).toContainEqual({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'otel-get-order',
    });
    const decisions = new Set(
      seen.get('maitento.approval.wait')!.attributes.map((a) => a['maitento.approval.decision']),
    );
    expect([...decisions].sort()).toEqual(['approved', 'expired', 'rejected']);
    for (const [, entry] of seen)
      for (const attrs of entry.attributes) {
        expect(Object.keys(attrs)).not.toContain('gen_ai.conversation.id');
        for (const value of Object.values(attrs)) expect(runIds).not.toContain(value);
      }
    const metricBytes = Buffer.concat(receiver.received.filter((r) => r.path === '/v1/metrics').map((r) => r.body));
    for (const id of runIds) expect(metricBytes.includes(id)).toBe(false);
  });

  it.each([
    ['http/json', true],
    ['http/protobuf', false],
    ['http/protobuf', true],
    ['http/json', false],
  ] as const)(
    'no secret, binding value or run input in any byte received (%s, capture %s)',
    async (protocol, capture) => {
      await serveWith(OTEL_ON(protocol, capture));
      const from = receiver.received.length;
      const run = await tracedRun('[two]');
      expect((await stack.api.waitForEnd(run.id)).status).toBe('Completed');
      // The run's spans arrived (its id is the root's gen_ai.conversation.id, in either encoding)...
      const mine = () => Buffer.concat(receiver.received.slice(from).map((r) => r.body));
      await until('the run’s spans', () => (mine().includes(run.id) ? true : undefined));
      const types = new Set(receiver.received.slice(from).map((r) => r.contentType));
      expect(types).toContain(protocol === 'http/json' ? 'application/json' : 'application/x-protobuf');
      // ...with the tool call's content only when capture is on (the upstream's answer for an order)...
      expect(mine().includes('gen_ai.tool.call.result')).toBe(capture);
      if (capture) expect(mine().includes('delivered')).toBe(true);
      // ...and not one of these, anywhere (the upstream did receive them: the secret and the binding).
      const upstreamSaw = stack.upstream.requests.map((r) => `${r.url} ${JSON.stringify(r.headers)}`).join('\n');
      expect(upstreamSaw).toContain(SECRET);
      expect(upstreamSaw).toContain(run.binding);
      const everything = Buffer.concat(receiver.received.map((r) => r.body));
      for (const value of secretsOf(run)) expect(everything.includes(value), value).toBe(false);
    },
  );

  it('an approval nobody answers expires through the sweep: await_approval expired under the root, no execute_tool', async () => {
    // MT_APPROVAL_TTL in seconds: the worker's sweep (every 2 s) fails the run once the approval is past it. After the
    // it.each above, so that its first case finds the server it asks for already running (JSON, capture on, no TTL).
    await restartServe({ ...OTEL_ON('http/json', true), MT_APPROVAL_TTL: '1' });
    const { run, approvalId } = await refundAwaitingApproval();
    const ended = await stack.api.waitForEnd(run.id);
    expect(ended.status, JSON.stringify(ended)).toBe('Failed');
    const wait = await approvalWaitSpan(run.id, 'api:approvals:expired');
    expect(wait.kind).toBe(KIND.internal);
    expect(wait.attributes).toEqual({
      'gen_ai.tool.name': 'refund-order',
      'maitento.approval.id': approvalId,
      'maitento.approval.decision': 'expired',
    });
    // The wait lasted the TTL: from the approval's creation to its expiry, about a second.
    expect(Number(wait.end - wait.start) / 1e6).toBeGreaterThanOrEqual(900);
    expect(Number(wait.end - wait.start) / 1e6).toBeLessThan(5000);
  });

  it('without an endpoint nothing is sent; with a closed port the run succeeds and mt serve stops within 6 s', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await restartServe({ OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}` });
    let from = receiver.received.length;
    const run = await tracedRun('[two]');
    const ended = await stack.api.waitForEnd(run.id);
    expect(ended.status).toBe('Completed');
    expect(ended.result).toContain('delivered');
    // The spans and metrics it could not send wait in the queue; a stop gives them at most 5 s. The server that
    // follows has no endpoint: the quiet run below runs on it (one start for both halves of the test).
    const stoppedIn = await restartServe({ OTEL_EXPORTER_OTLP_ENDPOINT: '' });
    expect(stoppedIn).toBeLessThan(6000);
    expect(receiver.received.length).toBe(from);

    from = receiver.received.length;
    const quiet = await tracedRun('[two]');
    expect((await stack.api.waitForEnd(quiet.id)).status).toBe('Completed');
    // Two seconds of silence (metrics every 0.5 s when an endpoint is set), the console's page read meanwhile.
    const [page] = await Promise.all([consoleRunPage(quiet.id), new Promise((resolve) => setTimeout(resolve, 2000))]);
    expect(receiver.received.length).toBe(from);
    // A run that started with OpenTelemetry off has no trace: no link on its page.
    expect(page).not.toContain('run-trace');
  }, 180_000);
});
