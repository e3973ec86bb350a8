import { randomUUID } from 'node:crypto';
import { APIError, Maitento } from '@maitento/sdk';
import { type HeldLock, holdLock, startTcpProxy, type TcpProxy } from '@maitento/testkit';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runsRepoFiles } from './helpers/config-repo.js';
import { type ServeProcess, startServe } from './helpers/processes.js';
import { type RunsStack, startRunsStack } from './helpers/stack.js';

// The fault matrix (issue #41; docs/testing.md, "Fault matrix"): every side-effecting route × {the deadline passes
// and the statement would commit later (a lock holder), the database connection black-holed mid-request, the server
// SIGKILLed mid-request}, each request sent by the SDK with one Idempotency-Key and retried as it retries. Each cell
// asserts, counting rows in the database: at most one effect; the answer the caller finally gets is that effect (or,
// while the outcome cannot be known, 409 api:request:in-progress, never a second run of the request); no run is left
// Running past the documented recovery time (15 s); /health says what is true. One server per fault kind, the cells
// of a kind at once.
const RECOVERY_MS = 15_000;

let stack: RunsStack;
let db: pg.Client;

/** What one cell's caller finally got: the SDK's answer, or its error's status and code; every status it saw. */
interface Outcome {
  ok: boolean;
  body?: unknown;
  status?: number;
  code?: string;
  error?: string;
  statuses: number[];
}

/** One side-effecting route, made ready for a cell: how to send it, and how many effects the database holds. */
interface Prepared {
  route: string;
  method: 'POST' | 'DELETE';
  path: string;
  body?: unknown;
  /** The body's own Content-Type (a document's text), sent as it is; otherwise the body goes as JSON. */
  contentType?: string;
  /** Effects of this cell's request in the database. */
  effects(): Promise<number>;
  /** Checks that a successful answer is the effect (the run, the secret, the deploy the database holds). */
  isTheEffect(body: unknown): Promise<void>;
  /** Runs this cell touched, to check none stays Running. */
  runs(): Promise<string[]>;
}

const count = async (sql: string, params: unknown[]) =>
  (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM (${sql}) AS x`, params)).rows[0]!.n;

async function waitForStatus(id: string, accept: (status: string) => boolean, ms = 30_000): Promise<string> {
  const deadline = Date.now() + ms;
  for (;;) {
    const { rows } = await db.query<{ status: string }>('SELECT status FROM mt_runs WHERE id = $1', [id]);
    const status = rows[0]?.status ?? 'missing';
    if (accept(status) || Date.now() > deadline) return status;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function startRun(name: string, message: string): Promise<string> {
  const started = await stack.api.startRun(name, { message });
  expect(started.status, JSON.stringify(started.body)).toBe(201);
  return started.body.id;
}

const chatFiles = [
  { path: 'agents/fm-chat-agent.mtr', content: 'model = "openai:gpt-4o-mini"\ninstructions = "Chat."\n' },
  {
    path: 'interactions/conversation/fm-chat.mtr',
    content: `agent = {
  name = "Desk"
  agent = @ref("fm-chat-agent")
}
task = "A customer writes: %%message%%"
inputs.prompts = [
  { name = "message" required = true }
]
`,
  },
];

/** The ten cells of one fault kind, made ready (their runs waiting, their key created). */
async function prepareKind(kind: string): Promise<Prepared[]> {
  const tag = `fm-${kind}-${randomUUID().slice(0, 8)}`;
  const [approveRun, rejectRun, messageRun, cancelRun] = await Promise.all([
    startRun('support-desk', `The lamp of order A-${kind.length}01 arrived broken, please refund it. ${tag}`),
    startRun('support-desk', `The lamp of order A-${kind.length}02 arrived broken, please refund it. ${tag}`),
    startRun('fm-chat', `Hello ${tag}`),
    startRun('fm-chat', `Hello again ${tag}`),
  ]);
  const key = await stack.api.request('POST', '/v1/keys', { role: 'user', name: `${tag}-key` });
  expect(key.status).toBe(201);
  const files = await stack.api.request('POST', '/v1/file-systems', { name: `${tag}-files` });
  expect(files.status, JSON.stringify(files.body)).toBe(201);
  const filePath = `notes/${tag}.txt`;
  const kb = await stack.api.request('POST', '/v1/knowledge-bases', { name: `${tag}-kb` });
  expect(kb.status, JSON.stringify(kb.body)).toBe(201);
  const documentName = `${tag}.txt`;
  const waits = await Promise.all([
    waitForStatus(approveRun, (s) => s !== 'Running'),
    waitForStatus(rejectRun, (s) => s !== 'Running'),
    waitForStatus(messageRun, (s) => s !== 'Running'),
    waitForStatus(cancelRun, (s) => s !== 'Running'),
  ]);
  expect(waits).toEqual(['PendingApproval', 'PendingApproval', 'WaitingForInput', 'WaitingForInput']);
  const events = (run: string, type: string, like = '%') =>
    count('SELECT 1 FROM mt_run_events WHERE run_id = $1 AND type = $2 AND data::text LIKE $3', [run, type, like]);
  const runView = async (run: string, body: unknown) => expect((body as { id: string }).id).toBe(run);
  const connector = `${tag}-conn`;
  return [
    {
      route: 'run start',
      method: 'POST',
      path: '/v1/interactions/weather/runs',
      body: { inputs: { place: `London ${tag}` } },
      effects: () => count('SELECT 1 FROM mt_runs WHERE inputs::text LIKE $1', [`%London ${tag}%`]),
      async isTheEffect(body) {
        const { rows } = await db.query('SELECT id FROM mt_runs WHERE inputs::text LIKE $1', [`%London ${tag}%`]);
        expect((body as { id: string }).id).toBe(rows[0]?.id);
      },
      async runs() {
        const { rows } = await db.query('SELECT id FROM mt_runs WHERE inputs::text LIKE $1', [`%London ${tag}%`]);
        return rows.map((r) => r.id as string);
      },
    },
    {
      route: 'message',
      method: 'POST',
      path: `/v1/runs/${messageRun}/messages`,
      body: { text: `Second message ${tag}` },
      effects: () => events(messageRun, 'user-message', `%Second message ${tag}%`),
      isTheEffect: (body) => runView(messageRun, body),
      runs: async () => [messageRun],
    },
    {
      route: 'approve',
      method: 'POST',
      path: `/v1/runs/${approveRun}/approve`,
      body: {},
      effects: () => events(approveRun, 'approval-answered'),
      isTheEffect: (body) => runView(approveRun, body),
      runs: async () => [approveRun],
    },
    {
      route: 'reject',
      method: 'POST',
      path: `/v1/runs/${rejectRun}/reject`,
      body: { reason: `Not this one ${tag}` },
      effects: () => events(rejectRun, 'approval-answered'),
      isTheEffect: (body) => runView(rejectRun, body),
      runs: async () => [rejectRun],
    },
    {
      route: 'cancel',
      method: 'POST',
      path: `/v1/runs/${cancelRun}/cancel`,
      body: {},
      // The cancel is stored at once (the run's cancel request) and carried out by the worker (run-cancelled).
      effects: () => events(cancelRun, 'run-cancelled'),
      isTheEffect: (body) => runView(cancelRun, body),
      runs: async () => [cancelRun],
    },
    {
      route: 'deploy',
      method: 'POST',
      path: '/v1/deploy',
      body: {
        files: [
          {
            path: `connectors/open-api/${connector}.mtr`,
            content: `method = "GET"\nurl = "http://127.0.0.1:9/${tag}"\ndescription = "Fault matrix ${tag}"\n`,
          },
        ],
      },
      effects: () => count('SELECT 1 FROM mt_resource_versions WHERE name = $1', [connector]),
      async isTheEffect(body) {
        // The answer of the deploy that stored it ("create", version 1), not of a second run ("unchanged").
        const changes = (body as { changes: { name: string; action: string; version: number }[] }).changes;
        expect(changes.find((c) => c.name === connector)).toMatchObject({ action: 'create', version: 1 });
      },
      runs: async () => [],
    },
    {
      route: 'secret write',
      method: 'POST',
      path: '/v1/secrets',
      body: { name: `${tag}-secret`, value: 'fault-matrix-value' },
      effects: () => count('SELECT 1 FROM mt_secrets WHERE name = $1', [`${tag}-secret`]),
      async isTheEffect(body) {
        const { rows } = await db.query('SELECT id FROM mt_secrets WHERE name = $1', [`${tag}-secret`]);
        expect((body as { id: string }).id).toBe(rows[0]?.id);
      },
      runs: async () => [],
    },
    {
      route: 'file write',
      method: 'POST',
      path: `/v1/file-systems/${files.body.id}/files`,
      body: { path: filePath, content: `Written once ${tag}` },
      // The file, plus one more when it was written a second time (a later write sets updated_at past created_at).
      effects: () =>
        count(
          'SELECT 1 FROM mt_files WHERE path = $1 UNION ALL SELECT 1 FROM mt_files WHERE path = $1 AND updated_at > created_at',
          [filePath],
        ),
      async isTheEffect(body) {
        const { rows } = await db.query('SELECT etag FROM mt_files WHERE path = $1', [filePath]);
        expect(body).toMatchObject({ path: filePath, etag: rows[0]?.etag });
      },
      runs: async () => [],
    },
    {
      route: 'KB add',
      method: 'POST',
      path: `/v1/knowledge-bases/${kb.body.id}/documents?name=${encodeURIComponent(documentName)}`,
      body: `Refunds are made within 14 days. ${tag}\n`,
      contentType: 'text/plain',
      // A second add of the same name replaces the document (one row either way): the effects are the inserts of a
      // document with its name, counted by the test's trigger (see beforeAll).
      effects: () => count('SELECT 1 FROM fm_kb_adds WHERE name = $1', [documentName]),
      async isTheEffect(body) {
        const { rows } = await db.query('SELECT id FROM mt_kb_documents WHERE name = $1', [documentName]);
        expect(body).toMatchObject({ id: rows[0]?.id, name: documentName });
      },
      runs: async () => [],
    },
    {
      route: 'key delete',
      method: 'DELETE',
      path: `/v1/keys/${key.body.id}`,
      // Deleting is one effect whatever is retried: the key is gone; a second run would answer 404, not 204.
      effects: async () => 1 - (await count('SELECT 1 FROM mt_api_keys WHERE id = $1', [key.body.id])),
      async isTheEffect(body) {
        expect(body).toBeUndefined();
      },
      runs: async () => [],
    },
  ];
}

/** Sends `cell`'s request as the SDK does (one Idempotency-Key, its retries) to `url`. */
async function send(url: string, cell: Prepared, idempotencyKey: string, maxRetries = 6): Promise<Outcome> {
  const statuses: number[] = [];
  const client = new Maitento({
    baseUrl: url,
    apiKey: stack.adminKey,
    maxRetries,
    timeoutMs: 20_000,
    fetch: async (input, init) => {
      const response = await fetch(input, init);
      statuses.push(response.status);
      return response;
    },
  });
  try {
    const body = await client.request(
      {
        method: cell.method,
        path: cell.path,
        body: cell.body,
        ...(cell.contentType === undefined ? {} : { contentType: cell.contentType }),
      },
      { idempotencyKey },
    );
    return { ok: true, body, statuses };
  } catch (error) {
    if (error instanceof APIError) {
      return { ok: false, status: error.status, code: error.code, error: error.error, statuses };
    }
    return { ok: false, code: String(error), statuses };
  }
}

/**
 * What every cell asserts once its caller has its answer: at most one effect; a success is that effect; a failure
 * is only "in progress" (the outcome is held, the request never ran twice) — or, for a request that certainly did
 * nothing, a retryable 503 with no effect.
 */
async function expectAtMostOnce(cell: Prepared, outcome: Outcome): Promise<void> {
  const effects = await cell.effects();
  if (process.env.MT_FAULT_MATRIX_PRINT)
    console.log('CELL', cell.route, JSON.stringify(outcome).slice(0, 300), effects);
  const seen = `${cell.route}: ${JSON.stringify(outcome)}, effects ${effects}`;
  expect(effects, seen).toBeLessThanOrEqual(1);
  if (outcome.ok) {
    if (cell.route !== 'cancel') expect(effects, seen).toBe(1);
    await cell.isTheEffect(outcome.body);
  } else if (outcome.code === 'api:request:in-progress') {
    // Held because an earlier attempt's outcome was not known: it had at most one effect (checked above).
    expect(outcome.statuses.slice(0, -1), seen).toContain(503);
  } else {
    expect([outcome.status, outcome.code, effects], seen).toEqual([503, 'api:store:unavailable', 0]);
  }
}

/** No run the cells touched stays Running past the recovery time (a cancel carried out, an answer acted on). */
async function expectNoneStuck(cells: Prepared[]): Promise<void> {
  const runs = (await Promise.all(cells.map((c) => c.runs()))).flat();
  const statuses = await Promise.all(runs.map((id) => waitForStatus(id, (s) => s !== 'Running', RECOVERY_MS)));
  expect(statuses.filter((s) => s === 'Running' || s === 'missing')).toEqual([]);
}

/** Every table the ten writes need, held in EXCLUSIVE mode (writes wait, reads go on) for `ms`. */
const EFFECT_TABLES = [
  'mt_runs',
  'mt_run_events',
  'mt_resource_versions',
  'mt_secrets',
  'mt_api_keys',
  'mt_files',
  'mt_kb_documents',
];
async function lockEffects(ms: number): Promise<HeldLock[]> {
  return Promise.all(EFFECT_TABLES.map((t) => holdLock(stack.db!.url, t, ms, 'EXCLUSIVE')));
}
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function health(url: string): Promise<number> {
  return fetch(`${url}/health`, { signal: AbortSignal.timeout(5_000) }).then(
    (r) => r.status,
    () => 0,
  );
}

async function waitForHealth(url: string, status: number, ms = 10_000): Promise<number> {
  const deadline = Date.now() + ms;
  let last = 0;
  while (Date.now() < deadline) {
    last = await health(url);
    if (last === status) return last;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return last;
}

beforeAll(async () => {
  stack = await startRunsStack({ servers: 1 });
  await stack.api.deploy([...runsRepoFiles({ origin: stack.upstream.origin }), ...chatFiles]);
  db = new pg.Client({ connectionString: stack.db!.url });
  await db.connect();
  // A document added again under its name replaces the first (one row either way), so the test counts the inserts:
  // a row per committed insert of a document (in the insert's transaction, so a rolled-back one leaves none).
  await db.query(`
    CREATE TABLE fm_kb_adds (name text NOT NULL);
    CREATE FUNCTION fm_kb_added() RETURNS trigger LANGUAGE plpgsql AS
      $$ BEGIN INSERT INTO fm_kb_adds VALUES (NEW.name); RETURN NEW; END $$;
    CREATE TRIGGER fm_kb_added AFTER INSERT ON mt_kb_documents FOR EACH ROW EXECUTE FUNCTION fm_kb_added();
  `);
}, 90_000);

afterAll(async () => {
  await db?.end();
  await stack?.close();
});

describe('fault matrix: each side-effecting route under each fault, retried with one Idempotency-Key', {
  timeout: 90_000,
}, () => {
  it('the deadline passes while a lock holds the write, which would commit later: one effect, the answer is it', async () => {
    const cells = await prepareKind('lock');
    const url = stack.servers[0]!.url;
    // Held past the statement deadline (1.5 s), for 3 s: each write waits, and would commit once the lock goes.
    const locks = await lockEffects(3_000);
    const outcomes = await Promise.all(
      cells.map((cell) => send(url, cell, `lock-${cell.route.replace(/ /g, '-')}-${randomUUID()}`)),
    );
    await Promise.all(locks.map((l) => l.released));
    // Anything that waited on a lock has ended by now, one way or the other.
    await new Promise((resolve) => setTimeout(resolve, 500));
    for (const [i, cell] of cells.entries()) {
      const outcome = outcomes[i]!;
      // The lock went; nothing was black-holed: every request ends in its success.
      expect(outcome.ok, `${cell.route}: ${JSON.stringify(outcome)}`).toBe(true);
      await expectAtMostOnce(cell, outcome);
      expect(await cell.effects(), cell.route).toBe(1);
    }
    // At least one attempt met the lock and was answered 503 (then retried): the fault was there.
    expect(outcomes.some((o) => o.statuses.includes(503))).toBe(true);
    await expectNoneStuck(cells);
    expect(await health(url)).toBe(200);
  });

  it('the database connection is black-holed mid-request: at most one effect, never answered as not done', async () => {
    const cells = await prepareKind('hole');
    const proxy: TcpProxy = await startTcpProxy();
    const server: ServeProcess = await startServe(stack.home, {
      ...stack.env,
      DATABASE_URL: proxy.via(stack.db!.url),
    });
    try {
      // Each write reaches PostgreSQL and waits on a lock; the connections go silent (both ways) at 400 ms; the lock
      // goes at 800 ms, so a single statement then commits and its answer is lost, while a transaction never gets its
      // COMMIT. New connections work again from 1 s, before the client's deadline (1.5 s): a key released at the
      // deadline would be released for real, and a retry would run the request a second time.
      const locks = await lockEffects(800);
      const sent = cells.map((cell) => send(server.url, cell, `hole-${cell.route.replace(/ /g, '-')}-${randomUUID()}`));
      await sleep(400);
      proxy.blackHole();
      await sleep(600);
      proxy.forward();
      const outcomes = await Promise.all(sent);
      await Promise.all(locks.map((l) => l.released));
      for (const [i, cell] of cells.entries()) await expectAtMostOnce(cell, outcomes[i]!);
      // The fault was there: attempts met it (503) and were retried.
      expect(outcomes.some((o) => o.statuses.includes(503))).toBe(true);
      await expectNoneStuck(cells);
      // /health tells the truth: 503 while this server cannot reach its database, 200 once it can.
      expect(await waitForHealth(server.url, 200)).toBe(200);
      proxy.blackHole();
      const during = await Promise.all([
        send(server.url, cells[0]!, `hole-after-${randomUUID()}`, 0),
        sleep(1_700).then(() => health(server.url)),
      ]);
      expect(during[1]).toBe(503);
      proxy.forward();
      expect(await waitForHealth(server.url, 200)).toBe(200);
    } finally {
      await server.stop();
      await proxy.close();
    }
  });

  it('the server is SIGKILLed mid-request: at most one effect; the retry on another server answers it or in-progress', async () => {
    const cells = await prepareKind('kill');
    const doomed: ServeProcess = await startServe(stack.home, stack.env);
    const keys = cells.map((cell) => `kill-${cell.route.replace(/ /g, '-')}-${randomUUID()}`);
    // Each write reaches PostgreSQL and waits on a lock; the process dies at 400 ms; the lock goes at 800 ms (before
    // the statement deadline), so a single statement of the dead process would commit, a transaction's does not.
    const locks = await lockEffects(800);
    // One attempt each, no retry: the process dies under them.
    const first = cells.map((cell, i) => send(doomed.url, cell, keys[i]!, 0));
    await sleep(400);
    await doomed.kill();
    await Promise.all(first);
    await Promise.all(locks.map((l) => l.released));
    await sleep(300);
    const url = stack.servers[0]!.url;
    const retries = await Promise.all(cells.map((cell, i) => send(url, cell, keys[i]!)));
    for (const [i, cell] of cells.entries()) {
      const outcome = retries[i]!;
      const effects = await cell.effects();
      if (process.env.MT_FAULT_MATRIX_PRINT)
        console.log('CELL kill', cell.route, JSON.stringify(outcome).slice(0, 300), effects);
      const seen = `${cell.route}: ${JSON.stringify(outcome)}, effects ${effects}`;
      expect(effects, seen).toBeLessThanOrEqual(1);
      if (outcome.ok) {
        if (cell.route !== 'cancel') expect(effects, seen).toBe(1);
        await cell.isTheEffect(outcome.body);
      } else {
        // The killed request still holds its key (until its lease ends): the retry is told so, and runs nothing.
        expect(outcome.code, seen).toBe('api:request:in-progress');
      }
    }
    await expectNoneStuck(cells);
    expect(await health(url)).toBe(200);
  });

  it('the server is SIGKILLed right after the COMMIT, the retry comes after the key lease: one effect, the answer is it', async () => {
    // Every route of the matrix binds its effect (or its whole answer) to its key in its transaction (decision 0102).
    // The deploy is left out of this line-up only: its transaction waits on the cache epoch's row, which the key delete
    // and the secret write hold while they wait on the line-up's lock, so it cannot commit with them (a kill after its
    // COMMIT is idempotent-effect-after-lease.test.ts's).
    const cells = (await prepareKind('after')).filter((c) => c.route !== 'deploy');
    const proxy: TcpProxy = await startTcpProxy();
    const [doomed, retrier] = await Promise.all([
      // Its statements may wait 4.8 s on a lock (MT_DB_TIMEOUT_MS 6 s): long enough for all of them to line up.
      startServe(stack.home, { ...stack.env, DATABASE_URL: proxy.via(stack.db!.url), MT_DB_TIMEOUT_MS: '6000' }),
      // The retry goes to a server whose key lease is 2 s, so it comes after the lease of the killed request.
      startServe(stack.home, { ...stack.env, MT_IDEMPOTENCY_LEASE: '2' }),
    ]);
    const keys = cells.map((cell) => `after-${cell.route.replace(/ /g, '-')}-${randomUUID()}`);
    const held = () => count('SELECT 1 FROM mt_idempotency_keys WHERE idem_key = ANY($1) AND status IS NULL', [keys]);
    let lock: pg.Client | undefined;
    try {
      // The pause point: every reply of the doomed server's database connections is 100 ms late. Once every request
      // has claimed its key, the test holds the key table in SHARE mode: each request's effect transaction then waits
      // at its last statement (binding the effect to its key). The lock goes when all wait; each sends its COMMIT, and
      // once every effect has committed the server is killed, the COMMITs' answers still on their way.
      proxy.latency(100);
      const first = cells.map((cell, i) => send(doomed.url, cell, keys[i]!, 0));
      const until = async (what: () => Promise<boolean>, ms: number) => {
        const deadline = Date.now() + ms;
        while (!(await what()) && Date.now() < deadline) await sleep(5);
      };
      await until(async () => (await held()) === cells.length, 10_000);
      lock = new pg.Client({ connectionString: stack.db!.url });
      await lock.connect();
      await lock.query('BEGIN; LOCK TABLE mt_idempotency_keys IN SHARE MODE');
      const waiting = () =>
        count(
          "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'UPDATE mt_idempotency_keys%'",
          [],
        );
      await until(async () => (await waiting()) === cells.length, 4_000);
      expect(await waiting()).toBe(cells.length);
      await lock.query('COMMIT');
      const bound = () =>
        count(
          'SELECT 1 FROM mt_idempotency_keys WHERE idem_key = ANY($1) AND (effect IS NOT NULL OR status IS NOT NULL)',
          [keys],
        );
      await until(async () => (await bound()) === cells.length, 2_000);
      await doomed.kill();
      // Every effect committed; no first attempt got its answer, and the dead server recorded none: the runs' keys
      // hold their effect only (a deploy's, a secret's, a file's and a deleted key's answer was recorded by its own
      // transaction).
      expect((await Promise.all(first)).filter((o) => o.ok)).toEqual([]);
      expect(await bound()).toBe(cells.length);
      expect(await held()).toBe(5);
      for (const cell of cells) expect(await cell.effects(), cell.route).toBe(1);
    } finally {
      await lock?.end();
      await doomed.kill();
      await proxy.close();
    }
    await sleep(2_500);
    try {
      const retries = await Promise.all(cells.map((cell, i) => send(retrier.url, cell, keys[i]!)));
      for (const [i, cell] of cells.entries()) {
        const outcome = retries[i]!;
        const seen = `${cell.route}: ${JSON.stringify(outcome)}`;
        expect(outcome.ok, seen).toBe(true);
        expect(await cell.effects(), seen).toBe(1);
        await cell.isTheEffect(outcome.body);
      }
      await expectNoneStuck(cells);
    } finally {
      await retrier.stop();
    }
  });
});
