import { randomUUID } from 'node:crypto';
import { startTcpProxy, type TcpProxy } from '@maitento/testkit';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runsRepoFiles } from './helpers/config-repo.js';
import { type ServeProcess, startServe } from './helpers/processes.js';
import { type RunsStack, startRunsStack } from './helpers/stack.js';

// Issue #41 item 1, its last gap (decision 0102): a server SIGKILLed between a keyed request's COMMIT and its answer
// left the key held without an answer; a retry after the key's lease took the key over and ran the request again (a
// second run, a second message, a second answer). The key and the effect now commit together, and the retry, after
// the lease too, answers from the effect. The pause point: the doomed server reaches PostgreSQL through a proxy that
// delays every reply by 250 ms; the test sees the effect committed (a row it polls) and kills the server before the
// COMMIT's answer reaches it. The lease is 2 s (MT_IDEMPOTENCY_LEASE), and the retry goes to another server. A deploy
// records its whole answer (the plan) in its transaction; its case shows that path.
const LEASE_SECONDS = 2;
const REPLY_DELAY_MS = 250;

let stack: RunsStack;
let db: pg.Client;

const chatFiles = [
  { path: 'agents/al-chat-agent.mtr', content: 'model = "openai:gpt-4o-mini"\ninstructions = "Chat."\n' },
  {
    path: 'interactions/conversation/al-chat.mtr',
    content: `agent = {
  name = "Desk"
  agent = @ref("al-chat-agent")
}
task = "A customer writes: %%message%%"
inputs.prompts = [
  { name = "message" required = true }
]
`,
  },
];

const count = async (sql: string, params: unknown[]) =>
  (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM (${sql}) AS x`, params)).rows[0]!.n;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitForStatus(id: string, want: string): Promise<string> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { rows } = await db.query<{ status: string }>('SELECT status FROM mt_runs WHERE id = $1', [id]);
    const status = rows[0]?.status ?? 'missing';
    if (status === want || Date.now() > deadline) return status;
    await sleep(100);
  }
}

async function started(name: string, inputs: Record<string, string>, want: string): Promise<string> {
  const run = await stack.api.startRun(name, inputs);
  expect(run.status, JSON.stringify(run.body)).toBe(201);
  expect(await waitForStatus(run.body.id, want)).toBe(want);
  return run.body.id;
}

/** A body sent as it is, with its own Content-Type (a document's text); any other body goes as JSON. */
interface RawBody {
  raw: string;
  contentType: string;
}

function send(url: string, path: string, body: unknown, key: string): Promise<Response> {
  const raw = body as Partial<RawBody>;
  const contentType = raw.contentType ?? 'application/json';
  return fetch(`${url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.adminKey}`, 'content-type': contentType, 'idempotency-key': key },
    body: raw.raw ?? JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
}

/**
 * Sends the keyed request to a server reaching PostgreSQL through a slow proxy, SIGKILLs that server as soon as
 * `effects()` sees the request's effect committed (its COMMIT's answer still on its way), waits past the key's lease,
 * and retries with the same key on the stack's server. Resolves with the retry's answer.
 */
async function killAfterCommitThenRetry(
  path: string,
  body: unknown,
  effects: () => Promise<number>,
  // What the key's record holds once the server is dead: no answer (a run's effect), or the answer the transaction
  // recorded with the effect (a deploy's plan).
  recorded: number | null = null,
): Promise<{ status: number; replayed: string | null; body: Record<string, unknown> }> {
  const proxy: TcpProxy = await startTcpProxy();
  const doomed: ServeProcess = await startServe(stack.home, { ...stack.env, DATABASE_URL: proxy.via(stack.db!.url) });
  const key = `after-lease-${randomUUID()}`;
  try {
    proxy.latency(REPLY_DELAY_MS);
    const first = send(doomed.url, path, body, key).then(
      (r) => r.status,
      () => 0,
    );
    const deadline = Date.now() + 20_000;
    while ((await effects()) === 0 && Date.now() < deadline) await sleep(10);
    await doomed.kill();
    // The first attempt never got its answer: its server died with the COMMIT's answer on its way.
    expect(await first).toBe(0);
    expect(await effects()).toBe(1);
    const { rows } = await db.query<{ status: number | null }>(
      'SELECT status FROM mt_idempotency_keys WHERE idem_key = $1',
      [key],
    );
    expect(rows).toEqual([{ status: recorded }]);
  } finally {
    await doomed.kill();
    await proxy.close();
  }
  await sleep(LEASE_SECONDS * 1000 + 500);
  const retry = await send(stack.servers[0]!.url, path, body, key);
  return {
    status: retry.status,
    replayed: retry.headers.get('idempotent-replayed'),
    body: (await retry.json()) as Record<string, unknown>,
  };
}

beforeAll(async () => {
  stack = await startRunsStack({ servers: 1, env: { MT_IDEMPOTENCY_LEASE: String(LEASE_SECONDS) } });
  await stack.api.deploy([...runsRepoFiles({ origin: stack.upstream.origin }), ...chatFiles]);
  db = new pg.Client({ connectionString: stack.db!.url });
  await db.connect();
}, 90_000);

afterAll(async () => {
  await db?.end();
  await stack?.close();
});

// The five cases at once, each with its own server to kill.
describe.concurrent('a server killed between the COMMIT and the answer, the retry sent after the key lease', {
  timeout: 60_000,
}, () => {
  it('run start: exactly one run, and the retry answers it (201)', async () => {
    const place = `Lisbon ${randomUUID()}`;
    const runs = () => count('SELECT 1 FROM mt_runs WHERE inputs::text LIKE $1', [`%${place}%`]);
    const retry = await killAfterCommitThenRetry('/v1/interactions/weather/runs', { inputs: { place } }, runs);
    const { rows } = await db.query<{ id: string }>('SELECT id FROM mt_runs WHERE inputs::text LIKE $1', [
      `%${place}%`,
    ]);
    expect({ runs: rows.length, status: retry.status, id: retry.body.id }).toEqual({
      runs: 1,
      status: 201,
      id: rows[0]!.id,
    });
    expect(retry.replayed).toBe('true');
  });

  it('message: exactly one message, and the retry answers its run (200)', async () => {
    const tag = randomUUID();
    const run = await started('al-chat', { message: `Hello ${tag}` }, 'WaitingForInput');
    const text = `Second message ${tag}`;
    const messages = () =>
      count("SELECT 1 FROM mt_run_events WHERE run_id = $1 AND type = 'user-message' AND data::text LIKE $2", [
        run,
        `%${text}%`,
      ]);
    const retry = await killAfterCommitThenRetry(`/v1/runs/${run}/messages`, { text }, messages);
    expect({ messages: await messages(), status: retry.status, id: retry.body.id }).toEqual({
      messages: 1,
      status: 200,
      id: run,
    });
  });

  it('approve: exactly one answer, and the retry answers its run (200)', async () => {
    const run = await started(
      'support-desk',
      { message: `The lamp of order A-1001 arrived broken, please refund it. ${randomUUID()}` },
      'PendingApproval',
    );
    const answers = () => count("SELECT 1 FROM mt_run_events WHERE run_id = $1 AND type = 'approval-answered'", [run]);
    const retry = await killAfterCommitThenRetry(`/v1/runs/${run}/approve`, {}, answers);
    // A second run of the request would answer 409 (already answered) or approve a redraft: neither happened.
    expect({ answers: await answers(), status: retry.status, id: retry.body.id }).toEqual({
      answers: 1,
      status: 200,
      id: run,
    });
  });

  it('deploy: exactly one version, and the retry answers the first plan (create, version 1)', async () => {
    const connector = `al-conn-${randomUUID().slice(0, 8)}`;
    const versions = () => count('SELECT 1 FROM mt_resource_versions WHERE name = $1', [connector]);
    const files = [
      {
        path: `connectors/open-api/${connector}.mtr`,
        content: `method = "GET"\nurl = "http://127.0.0.1:9/${connector}"\ndescription = "After the lease"\n`,
      },
    ];
    const retry = await killAfterCommitThenRetry('/v1/deploy', { files }, versions, 200);
    // A second run of the deploy would answer "unchanged"; the first plan said "create".
    const changes = retry.body.changes as { name: string; action: string; version: number }[];
    expect({
      versions: await versions(),
      status: retry.status,
      change: changes.find((c) => c.name === connector),
    }).toEqual({ versions: 1, status: 200, change: expect.objectContaining({ action: 'create', version: 1 }) });
    expect(retry.replayed).toBe('true');
  });

  it('KB add: the document added once, and the retry answers it (201, its id)', async () => {
    const kb = await stack.api.request('POST', '/v1/knowledge-bases', { name: `al-kb-${randomUUID().slice(0, 8)}` });
    expect(kb.status, JSON.stringify(kb.body)).toBe(201);
    const name = `al-${randomUUID().slice(0, 8)}.txt`;
    // A second add of the name replaces the document under a new id: the first id seen is the first add's.
    let first: string | undefined;
    const documents = async () => {
      const { rows } = await db.query<{ id: string }>('SELECT id FROM mt_kb_documents WHERE name = $1', [name]);
      first ??= rows[0]?.id;
      return rows.length;
    };
    const body: RawBody = { raw: 'Refunds are made within 14 days.\n', contentType: 'text/plain' };
    const retry = await killAfterCommitThenRetry(
      `/v1/knowledge-bases/${kb.body.id}/documents?name=${encodeURIComponent(name)}`,
      body,
      documents,
      201,
    );
    const { rows } = await db.query<{ id: string }>('SELECT id FROM mt_kb_documents WHERE name = $1', [name]);
    expect({ status: retry.status, answered: retry.body.id, stored: rows.map((r) => r.id) }).toEqual({
      status: 201,
      answered: first,
      stored: [first],
    });
    expect(retry.replayed).toBe('true');
  });
});
