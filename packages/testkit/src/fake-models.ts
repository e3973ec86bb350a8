// Fake model servers for tests: a real HTTP server on 127.0.0.1 that speaks the OpenAI Chat Completions
// API or the Anthropic Messages API, plays a script of turns and records every request it receives.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import {
  type FakeAnswer,
  type FakeModelConversation,
  type FakeModelProvider,
  readConversation,
  sendJson,
  writeAnswer,
  writeError,
} from './fake-model-wire.js';

export type {
  FakeAnswer,
  FakeModelConversation,
  FakeModelProvider,
  FakeModelSeenToolCall,
  FakeModelTool,
  FakeModelToolResult,
  FakeToolCall,
} from './fake-model-wire.js';
import { createRequestLog } from './request-log.js';

/** One request a fake model server received. */
export interface FakeModelRequest {
  /** 1-based, in arrival order. */
  index: number;
  method: string;
  path: string;
  /** Lower-case header names. */
  headers: Record<string, string | string[] | undefined>;
  /** The parsed JSON body (undefined when it was not JSON). */
  body: unknown;
  /** A provider-neutral reading of the body: system, user texts, tools, tool calls and results. */
  conversation: FakeModelConversation;
}

/** A scripted failure instead of an answer. */
export type FakeFailure =
  /** An HTTP error status with a body in the provider's error format (default 500). */
  | { fail: 'status'; status?: number; message?: string }
  /** 200 with a body that is not JSON. */
  | { fail: 'invalid-json' }
  /** 200 with JSON of the wrong shape (no choices / no content). */
  | { fail: 'wrong-shape' }
  /** The connection is destroyed without an answer. */
  | { fail: 'disconnect' }
  /** Nothing is answered for `ms`, then the connection is destroyed. */
  | { fail: 'hang'; ms: number };

/** What the fake does for one request: an answer (optionally after `delayMs`) or a failure. */
export type FakeTurn = (FakeAnswer & { delayMs?: number }) | FakeFailure;

/** A script entry: a turn, or a function of the request that returns one. */
export type FakeStep = FakeTurn | ((request: FakeModelRequest) => FakeTurn | Promise<FakeTurn>);

/** Options of {@link createFakeOpenAI} and {@link createFakeAnthropic}. */
export interface FakeModelOptions {
  /** Turns played in order, one per request. */
  script?: FakeStep[];
  /** What to do once the script is used up; without it such a request gets a 500 saying so. */
  respond?: (request: FakeModelRequest) => FakeTurn | Promise<FakeTurn>;
  /** Port to listen on; 0 (the default) picks a free one. */
  port?: number;
}

/** A running fake model server. */
export interface FakeModelServer {
  provider: FakeModelProvider;
  /** Base URL including `/v1`, for `OPENAI_BASE_URL` / `ANTHROPIC_BASE_URL` or the provider's `baseURL`. */
  url: string;
  port: number;
  /** Every request received so far, in order. */
  requests: FakeModelRequest[];
  /** Appends turns to the script. */
  push(...steps: FakeStep[]): void;
  /** Replaces what is left of the script and the fallback. */
  setScript(steps: FakeStep[], respond?: FakeModelOptions['respond']): void;
  /** Resolves with the first recorded request that matches (waiting for it), or rejects after `timeoutMs`. */
  waitForRequest(match?: (r: FakeModelRequest) => boolean, timeoutMs?: number): Promise<FakeModelRequest>;
  /** Stops listening and drops open connections: later requests are refused. */
  close(): Promise<void>;
  /** Listens again on the same port after {@link close}. */
  reopen(): Promise<void>;
}

/** Starts a fake OpenAI Chat Completions server (`POST /v1/chat/completions`) on 127.0.0.1. */
export function createFakeOpenAI(options: FakeModelOptions = {}): Promise<FakeModelServer> {
  return createFakeModel('openai', options);
}

/** Starts a fake Anthropic Messages API server (`POST /v1/messages`) on 127.0.0.1. */
export function createFakeAnthropic(options: FakeModelOptions = {}): Promise<FakeModelServer> {
  return createFakeModel('anthropic', options);
}

const PATHS: Record<FakeModelProvider, string> = { openai: '/v1/chat/completions', anthropic: '/v1/messages' };

async function createFakeModel(provider: FakeModelProvider, options: FakeModelOptions): Promise<FakeModelServer> {
  let script: FakeStep[] = [...(options.script ?? [])];
  let respond = options.respond;
  let counter = 0;
  const log = createRequestLog<FakeModelRequest>();
  const requests = log.requests;
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        timers.delete(t);
        resolve();
      }, ms);
      timers.add(t);
    });

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'POST' || path !== PATHS[provider]) {
      sendJson(res, 404, { error: { message: `fake ${provider} model: no route ${req.method} ${path}` } });
      return;
    }
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      body = undefined;
    }
    const request: FakeModelRequest = {
      index: requests.length + 1,
      method: req.method,
      path,
      headers: { ...req.headers },
      body,
      conversation: readConversation(provider, body),
    };
    log.push(request);

    const step = script.shift() ?? respond;
    if (step === undefined) {
      writeError(provider, res, 500, `fake ${provider} model: script used up at request ${request.index}`);
      return;
    }
    let turn: FakeTurn;
    try {
      turn = typeof step === 'function' ? await step(request) : step;
    } catch (error) {
      writeError(provider, res, 500, `fake ${provider} model: script function threw: ${String(error)}`);
      return;
    }
    if ('fail' in turn) {
      switch (turn.fail) {
        case 'status':
          writeError(provider, res, turn.status ?? 500, turn.message ?? 'fake model: scripted failure');
          return;
        case 'invalid-json':
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{"choices": [ this is not json');
          return;
        case 'wrong-shape':
          sendJson(res, 200, { hello: 'a body of the wrong shape' });
          return;
        case 'disconnect':
          req.socket.destroy();
          return;
        case 'hang':
          await sleep(turn.ms);
          req.socket.destroy();
          return;
      }
    }
    if (turn.delayMs) await sleep(turn.delayMs);
    const model = request.conversation.model ?? 'fake-model';
    writeAnswer(provider, res, turn, {
      model,
      stream: request.conversation.stream,
      nextId: () => String(++counter),
    });
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error) => {
      if (!res.headersSent) writeError(provider, res, 500, `fake model: ${String(error)}`);
      else res.destroy();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });

  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve((server.address() as AddressInfo).port);
      });
    });
  const port = await listen(options.port ?? 0);

  return {
    provider,
    url: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    push: (...steps) => {
      script.push(...steps);
    },
    setScript: (steps, fallback) => {
      script = [...steps];
      respond = fallback;
    },
    waitForRequest: (match = () => true, timeoutMs = 10_000) =>
      log.waitFor(
        match,
        timeoutMs,
        () => `fake ${provider} model: no matching request in ${timeoutMs} ms (${requests.length} seen)`,
      ),
    close: async () => {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      if (!server.listening) return;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await closed;
    },
    reopen: async () => {
      if (!server.listening) await listen(port);
    },
  };
}
