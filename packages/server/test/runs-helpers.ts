import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEgressPolicy } from '@maitento/egress';
import { createEngine, type Engine, type ModelResolver, modelsFromEnvironment, scriptedModel } from '@maitento/engine';
import { createGateway } from '@maitento/gateway';
import { createServer, type ServerOptions } from '@maitento/server';
import { createPgDb, type Db, migrate } from '@maitento/store';
import {
  createTestDatabase,
  ordersRepo,
  waitFor as pollUntil,
  startRecordingUpstream,
  type TestDatabase,
} from '@maitento/testkit';
import type { FastifyInstance } from 'fastify';
import { auth, localResolver } from './helpers.js';

/** One request the upstream saw. */
export interface SeenRequest {
  method: string;
  url: string;
  headers: Record<string, unknown>;
  body: string;
}

/** A run as the API answers it, loosely typed for assertions. */
export interface RunJson {
  id: string;
  status: string;
  result: string | null;
  versions: unknown[];
  pendingApproval: { id: string; argumentsJson: string; [field: string]: unknown };
  [field: string]: unknown;
}

/** A gate a model waits at before each answer, opened by the test. */
export class Gate {
  #open = true;
  #waiters: (() => void)[] = [];
  /** Model turns that have reached the gate. */
  arrived = 0;
  close(): void {
    this.#open = false;
  }
  open(): void {
    this.#open = true;
    for (const waiter of this.#waiters.splice(0)) waiter();
  }
  async pass(): Promise<void> {
    this.arrived++;
    if (!this.#open) await new Promise<void>((resolve) => this.#waiters.push(resolve));
  }
}

/** A server with a worker, scripted models, a recording upstream, and the orders repo deployed. */
export interface RunsWorld {
  app: FastifyInstance;
  db: Db;
  adminKey: string;
  secretKey: Buffer;
  upstream: { url: string; seen: SeenRequest[] };
  /** `scripted:gated` waits here before each turn. */
  gate: Gate;
  /** How many times the server asked the engine for a run's events. */
  listEventsCalls(): number;
  /** The address of the server, when it was started with `listen`. */
  url: string;
  script(name: string, turns: unknown[]): void;
  /** Injects a request with the admin key (or `key`). */
  request(method: 'GET' | 'POST', url: string, payload?: unknown, key?: string): ReturnType<FastifyInstance['inject']>;
  /** Polls the run until `done` (default: no longer Running). */
  waitFor(id: string, done?: (run: RunJson) => boolean): Promise<RunJson>;
  close(): Promise<void>;
}

/** The secret value the orders upstream expects; it must never show in a run, an event or an approval. */
export const ORDERS_SECRET = `sk-orders-${randomBytes(8).toString('hex')}`;

// The orders repo of testkit, and an agent whose model waits at a gate (to hold a run in flight).
function repoFiles(origin: string) {
  return [
    ...ordersRepo({ origin }),
    {
      path: 'agents/slow-agent.mtr',
      content: `model = "scripted:gated"
instructions = "Take your time."
functions = [ { ref = @ref("get-order") } ]
`,
    },
    {
      path: 'interactions/one-shot/slow.mtr',
      content: `agent = { name = "Slow" agent = @ref("slow-agent") }
task = "Look at %%order%%"
inputs.prompts = [ { name = "order" required = true } ]
`,
    },
  ];
}

/**
 * Starts the world: database, upstream, server with a worker (the streams' fallback poll set to `pollMs`); `server`
 * adds to (or overrides) the options given to `createServer` (a function gets the database's URL first).
 */
export async function startRunsWorld(
  options: {
    pollMs?: number;
    keepAliveMs?: number;
    listen?: boolean;
    /** More options of `createServer` (limits, MCP settings), or a function of the test database's URL making them. */
    server?: Partial<ServerOptions> | ((databaseUrl: string) => Partial<ServerOptions>);
    /** Told of every statement the engine and the server run on the pool, with the number of rows it answered. */
    onQuery?: (text: string, rows: number) => void;
  } = {},
): Promise<RunsWorld> {
  const database: TestDatabase = await createTestDatabase('mt_server_runs', { migrated: true });
  const pool = createPgDb(database.url);
  const onQuery = options.onQuery;
  const db: Db =
    onQuery === undefined
      ? pool
      : {
          ...pool,
          query: async <R>(text: string, params?: unknown[]) => {
            const result = await pool.query<R>(text, params);
            onQuery(text, result.rows.length);
            return result;
          },
        };
  const upstream = await startRecordingUpstream(({ method, url, headers, body }, res) => {
    res.setHeader('content-type', 'application/json');
    if (headers['x-api-key'] !== ORDERS_SECRET) {
      res.statusCode = 401;
      return res.end('{"error":"bad key"}');
    }
    if (method === 'POST') return res.end(JSON.stringify({ refunded: JSON.parse(body || '{}').amount }));
    res.end(JSON.stringify({ id: url.split('/').pop(), status: 'delivered', paid: 40 }));
  });
  const origin = `http://orders.example.test:${upstream.port}`;
  const scriptsDir = mkdtempSync(join(tmpdir(), 'mt-server-scripts-'));
  const gate = new Gate();
  const base = modelsFromEnvironment({ scriptsDir });
  const models: ModelResolver = (spec) => {
    if (spec !== 'scripted:gated') return base(spec);
    const inner = scriptedModel('gated', scriptsDir);
    return {
      scripted: true,
      model: {
        ...inner,
        doGenerate: async (callOptions) => {
          // A cancelled run aborts its model call: the gate lets an aborted call go, as a real model request would.
          const signal = callOptions.abortSignal;
          await Promise.race([
            gate.pass(),
            new Promise<void>((_, reject) => {
              if (signal?.aborted) reject(signal.reason);
              signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
            }),
          ]);
          return inner.doGenerate(callOptions);
        },
      },
    };
  };
  const adminKey = `mt_${randomBytes(24).toString('base64url')}`;
  const secretKey = randomBytes(32);
  const egress = createEgressPolicy({ allow: '127.0.0.1/32' });
  const gateway = createGateway({ policy: egress, resolver: localResolver(['orders.example.test']) });
  // The engine is made here and handed to the server, so the test can count what the server asks of it.
  await migrate(db);
  const engine = await createEngine({
    db,
    secretKey,
    gateway,
    worker: { concurrency: 4 },
    models,
    modelRetries: 0,
  });
  let listEventsCalls = 0;
  // The engine's methods are its class's: the counting engine inherits them and overrides one.
  const counted: Engine = Object.create(engine);
  counted.listEvents = (namespace, id, after, limit) => {
    listEventsCalls++;
    return engine.listEvents(namespace, id, after, limit);
  };
  const app = await createServer({
    db,
    secretKey,
    egress,
    gateway,
    bootstrapKey: adminKey,
    logger: false,
    engine: counted,
    streamTiming: { pollMs: options.pollMs ?? 50, keepAliveMs: options.keepAliveMs ?? 15_000 },
    ...(typeof options.server === 'function' ? options.server(database.url) : options.server),
  });
  const request: RunsWorld['request'] = (method, url, payload, key = adminKey) =>
    app.inject({
      method,
      url,
      headers: auth(key),
      ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
    });
  const secret = await request('POST', '/v1/secrets', { name: 'orders-key', value: ORDERS_SECRET });
  if (secret.statusCode !== 201) throw new Error(secret.body);
  const deployed = await request('POST', '/v1/deploy', { files: repoFiles(origin) });
  if (deployed.statusCode !== 200) throw new Error(deployed.body);
  const url = options.listen ? await app.listen({ port: 0, host: '127.0.0.1' }) : '';
  const world: RunsWorld = {
    app,
    url,
    listEventsCalls: () => listEventsCalls,
    db,
    adminKey,
    secretKey,
    upstream: { url: origin, seen: upstream.requests },
    gate,
    script(name, turns) {
      writeFileSync(join(scriptsDir, `${name}.json`), JSON.stringify(turns));
    },
    request,
    waitFor: (id, done = (run) => run.status !== 'Running') =>
      pollUntil(async () => (await request('GET', `/v1/runs/${id}`)).json(), done, {
        timeoutMs: 15_000,
        describe: (run) => `run ${id} still ${run?.status}`,
      }),
    async close() {
      gate.open();
      await app.close();
      await engine.close();
      await gateway.close();
      await db.close();
      await upstream.close();
      await database.drop();
    },
  };
  return world;
}

/** One Server-Sent Events frame as read: its fields, or the text of a comment line. */
export interface Frame {
  id?: string;
  event?: string;
  data?: string;
  comment?: string;
}

/** The frames that are events (not comments). */
export const streamEvents = (frames: Frame[]) => frames.filter((f) => f.event !== undefined);

/**
 * Opens `GET {url}/v1/runs/{runId}/stream{query}` with `key`; `readUntil` reads frames until its check says stop
 * (or the stream ends), failing after `ms`.
 */
export async function openRunStream(
  url: string,
  key: string,
  runId: string,
  headers: Record<string, string> = {},
  query = '',
) {
  const controller = new AbortController();
  const res = await fetch(`${url}/v1/runs/${runId}/stream${query}`, {
    headers: { ...auth(key), ...headers },
    signal: controller.signal,
  });
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let ended = false;
  const frames: Frame[] = [];
  async function readUntil(until: (frames: Frame[]) => boolean, ms = 10_000): Promise<Frame[]> {
    const deadline = Date.now() + ms;
    while (!until(frames) && !ended) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`stream: nothing matched in ${ms} ms: ${JSON.stringify(frames)}`);
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`stream: nothing matched in ${ms} ms: ${JSON.stringify(frames)}`)),
          left,
        );
      });
      const { value, done } = await Promise.race([reader.read(), late]).finally(() => clearTimeout(timer));
      if (done) {
        ended = true;
        break;
      }
      buffer += decoder.decode(value, { stream: true });
      let end = buffer.indexOf('\n\n');
      while (end !== -1) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const frame: Frame = {};
        for (const line of block.split('\n')) {
          if (line.startsWith(':')) frame.comment = line.slice(1).trim();
          else {
            const colon = line.indexOf(':');
            frame[line.slice(0, colon) as 'id' | 'event' | 'data'] = line.slice(colon + 2);
          }
        }
        frames.push(frame);
        end = buffer.indexOf('\n\n');
      }
    }
    return frames;
  }
  return {
    res,
    frames,
    readUntil,
    readToEnd: (ms?: number) => readUntil(() => false, ms),
    get ended() {
      return ended;
    },
    abort: () => controller.abort(),
  };
}
