import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { createPgDb } from '@maitento/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunView } from './helpers/api.js';
import { runsRepoFiles } from './helpers/config-repo.js';
import { type RunsStack, startRunsStack } from './helpers/stack.js';
import { defaultUpstreamAnswer, startUpstream, type Upstream, type UpstreamRequest } from './helpers/upstream.js';

// The leak canary: a secret with a unique value goes through the support flow on every path a run can take
// (success, non-2xx, redirect, approval, rejection, failure, cancel) against the real `mt serve` and `mt worker`
// on PostgreSQL, logging at debug level. Then every API response, SSE stream, log line, stored row (of every
// table of every schema, pg-boss's included) and every request to the model is searched for the value in plain,
// base64, URL-encoded, hex, JSON-escaped and `Bearer <value>` forms: none may hold it.
const CANARY = `cnry-${randomBytes(12).toString('hex')}/+=&?"x`;
const FORMS: Record<string, string> = {
  plain: CANARY,
  base64: Buffer.from(CANARY).toString('base64'),
  base64url: Buffer.from(CANARY).toString('base64url'),
  'URL-encoded': encodeURIComponent(CANARY),
  'form-encoded': new URLSearchParams({ k: CANARY }).toString().slice(2),
  hex: Buffer.from(CANARY).toString('hex'),
  'JSON-escaped': JSON.stringify(CANARY).slice(1, -1),
  Bearer: `Bearer ${CANARY}`,
};

let stack: RunsStack;
let elsewhere: Upstream;
const responses: Promise<string>[] = [];
const realFetch = globalThis.fetch;
let releaseCancelled: () => void = () => {};
const cancelHold = new Promise<void>((resolve) => {
  releaseCancelled = resolve;
});

// The upstream echoes the key it got (body and a header) on errors, as careless APIs do, and redirects.
function handler(request: UpstreamRequest, res: ServerResponse): unknown {
  const path = request.url.split('?')[0];
  const key = String(request.headers['x-api-key'] ?? '');
  if (path === '/orders/E-500') {
    res.writeHead(500, { 'content-type': 'application/json', 'x-echo': encodeURIComponent(key) });
    res.end(JSON.stringify({ error: `key ${key} is not allowed`, encoded: encodeURIComponent(key) }));
    return;
  }
  if (path === '/orders/D-302') {
    res.writeHead(302, { location: `${elsewhere.origin}/orders/D-302` });
    res.end();
    return;
  }
  if (path === '/orders/F-1') {
    res.destroy();
    return;
  }
  if (path === '/orders/C-1') return cancelHold.then(() => defaultUpstreamAnswer(request, res));
  return defaultUpstreamAnswer(request, res);
}

beforeAll(async () => {
  elsewhere = await startUpstream();
  stack = await startRunsStack({ servers: 1, workers: 1, deploy: false, env: { MT_LOG_LEVEL: 'debug' } });
  stack.upstream.setHandler(handler);
  // Every answer of the API to this test is kept (read from a clone, so streams are read to their end too).
  globalThis.fetch = async (input, init) => {
    const response = await realFetch(input, init);
    if (String(input instanceof Request ? input.url : input).startsWith(stack.api.url)) {
      const headers = JSON.stringify([...response.headers]);
      responses.push(
        response
          .clone()
          .text()
          .then((text) => `${response.status} ${headers} ${text}`),
      );
    }
    return response;
  };
}, 90_000);

afterAll(async () => {
  globalThis.fetch = realFetch;
  releaseCancelled();
  await stack?.close();
  await elsewhere?.close();
});

async function start(name: string, inputs: Record<string, unknown>): Promise<string> {
  const started = await stack.api.startRun(name, inputs);
  expect(started.status, JSON.stringify(started.body)).toBe(201);
  return started.body.id;
}

const pending = (id: string) =>
  stack.api.waitForRun(id, (r) => r.status === 'PendingApproval' || r.status !== 'Running');

async function allRows(): Promise<{ tables: string[]; text: string }> {
  const db = createPgDb(stack.db!.url);
  try {
    const { rows: tables } = await db.query<{ s: string; t: string }>(
      "SELECT table_schema AS s, table_name AS t FROM information_schema.tables WHERE table_type = 'BASE TABLE' " +
        "AND table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1, 2",
    );
    let text = '';
    for (const { s, t } of tables) {
      const { rows } = await db.query<{ r: string }>(`SELECT x::text AS r FROM "${s}"."${t}" x`);
      text += `\n${s}.${t}: ${rows.map((row) => row.r).join('\n')}`;
    }
    return { tables: tables.map(({ s, t }) => `${s}.${t}`), text };
  } finally {
    await db.close();
  }
}

function leaks(where: string, haystack: string): string[] {
  return Object.entries(FORMS)
    .filter(([, form]) => haystack.includes(form))
    .map(([name]) => `${where}: ${name}`);
}

describe('the secret leak canary', { timeout: 120_000 }, () => {
  it('never shows the value in a response, stream, log line, stored row or model request, on any path of a run', async () => {
    const created = await stack.api.request('POST', '/v1/secrets', { name: 'orders-api-key', value: CANARY });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    await stack.api.deploy(runsRepoFiles({ origin: stack.upstream.origin }));
    const runs: Record<string, string> = {};

    // Success, through the tool's own secret and through the run's choice of it (support-any-shop).
    runs.success = await start('support-desk', { message: 'Where is my order A-1001?' });
    runs.chosen = await start('support-any-shop', { message: 'Where is my order A-1002?', shopKey: created.body.id });
    // Non-2xx (the upstream echoes the key), a redirect to another origin, a failed connection.
    runs.non2xx = await start('support-desk', { message: 'Where is my order E-500?' });
    runs.redirect = await start('support-desk', { message: 'Where is my order D-302?' });
    runs.broken = await start('support-desk', { message: 'Where is my order F-1?' });
    // A model failure.
    runs.failure = await start('support-desk', { message: 'Where is my order A-1003? [fail:500]' });
    for (const id of Object.values(runs)) await stack.api.waitForEnd(id);

    // Approval, then rejection of both drafts.
    runs.approval = await start('support-desk', { message: 'Please refund order A-2001, the lamp arrived broken' });
    expect((await pending(runs.approval)).status).toBe('PendingApproval');
    expect((await stack.api.request('POST', `/v1/runs/${runs.approval}/approve`, {})).status).toBe(200);
    runs.rejection = await start('support-desk', { message: 'Please refund order A-2002, the lamp arrived broken' });
    const first = await pending(runs.rejection);
    expect(first.status).toBe('PendingApproval');
    const reject = { reason: 'Not this one' };
    expect((await stack.api.request('POST', `/v1/runs/${runs.rejection}/reject`, reject)).status).toBe(200);
    await stack.api.waitForRun(
      runs.rejection,
      (r: RunView) => r.status === 'PendingApproval' && r.pendingApproval?.id !== first.pendingApproval?.id,
    );
    expect((await stack.api.request('POST', `/v1/runs/${runs.rejection}/reject`, reject)).status).toBe(200);

    // Cancel while the tool call is at the upstream.
    runs.cancel = await start('support-desk', { message: 'Where is my order C-1?' });
    await stack.upstream.waitFor((r) => r.url.startsWith('/orders/C-1'));
    expect((await stack.api.request('POST', `/v1/runs/${runs.cancel}/cancel`)).status).toBe(200);
    // The worker aborts the held call when it sees the cancel; the upstream answers only after that.
    await stack.api.waitForRun(runs.cancel, (r) => r.status !== 'Running', 30_000);
    releaseCancelled();

    const ended: Record<string, RunView> = {};
    for (const [path, id] of Object.entries(runs)) ended[path] = await stack.api.waitForEnd(id);
    expect(Object.fromEntries(Object.entries(ended).map(([path, run]) => [path, run.status]))).toEqual({
      success: 'Completed',
      chosen: 'Completed',
      non2xx: 'Completed',
      redirect: 'Completed',
      broken: 'Completed',
      failure: 'Failed',
      approval: 'Completed',
      rejection: 'Completed',
      cancel: 'Cancelled',
    });

    // Every run's events as JSON and as its SSE stream; an approval and the run lists too.
    for (const id of Object.values(runs)) {
      await stack.api.events(id);
      const stream = await globalThis.fetch(`${stack.api.url}/v1/runs/${id}/stream`, {
        headers: { authorization: `Bearer ${stack.adminKey}` },
        signal: AbortSignal.timeout(10_000),
      });
      expect(stream.status).toBe(200);
      await stream.text();
    }
    await stack.api.request('GET', '/v1/runs');
    await stack.api.request('GET', '/v1/approvals');
    await stack.api.request('GET', '/v1/secrets');
    // A direct call, and its dry run.
    const direct = await stack.api.request('POST', '/v1/extops/get-order/call', {
      arguments: { additionalInputs: { 'path.orderId': 'E-500' } },
    });
    expect(direct.status, JSON.stringify(direct.body)).toBe(200);

    // The value did go where it belongs: the upstream got it on every call to its own origin, never elsewhere.
    const toUpstream = stack.upstream.requests.filter((r) => r.url.startsWith('/orders/'));
    expect(toUpstream.length).toBeGreaterThanOrEqual(10);
    for (const r of toUpstream) expect(r.headers['x-api-key'], r.url).toBe(CANARY);
    expect(elsewhere.requests.map((r) => r.url)).toEqual(['/orders/D-302']);
    expect(elsewhere.requests[0].headers['x-api-key']).toBeUndefined();

    // Now search.
    const answers = await Promise.all(responses);
    const logs = [...stack.servers, ...stack.workers].map((p) => p.log()).join('\n');
    const rows = await allRows();
    const model = stack.openai.server.requests.map((r) => JSON.stringify(r)).join('\n');
    // The haystacks are real: each holds what the runs did (an order id the upstream echoed, the run ids).
    expect(answers.join('\n')).toContain('E-500');
    expect(answers.join('\n')).toContain('event: ');
    // The upstream's echo of the value came back masked.
    expect(answers.join('\n')).toContain('[secret]');
    // The request that carried the value was logged (debug logs every request), without it.
    expect(logs).toMatch(/"method":"POST","route":"\/v1\/secrets","statusCode":201/);
    expect(logs.split('\n').length).toBeGreaterThan(50);
    expect(rows.tables).toEqual(expect.arrayContaining(['public.mt_secrets', 'public.mt_run_events']));
    expect(rows.tables.some((t) => t.startsWith('pgboss'))).toBe(true);
    expect(rows.text).toContain(runs.approval);
    expect(model).toContain('E-500');
    expect([
      ...leaks('API responses', answers.join('\n')),
      ...leaks('logs', logs),
      ...leaks('stored rows', rows.text),
      ...leaks('model requests', model),
    ]).toEqual([]);
  });

  it('a run whose chosen secret was tampered with in the database fails with api:secrets:decrypt-failed, and nothing is sent', async () => {
    const made = await stack.api.request('POST', '/v1/secrets', { name: 'tampered', value: `${CANARY}-2` });
    expect(made.status).toBe(201);
    const db = createPgDb(stack.db!.url);
    try {
      await db.query(
        'UPDATE mt_secrets SET wrapped_key = set_byte(wrapped_key, 20, get_byte(wrapped_key, 20) # 1) WHERE id = $1',
        [made.body.id],
      );
    } finally {
      await db.close();
    }
    const id = await start('support-any-shop', { message: 'Where is my order T-1?', shopKey: made.body.id });
    const run = await stack.api.waitForEnd(id);
    expect(run).toMatchObject({ status: 'Failed', error: { code: 'api:secrets:decrypt-failed' } });
    expect(run.error?.message).toContain(made.body.id);
    expect(stack.upstream.requests.filter((r) => r.url.startsWith('/orders/T-1'))).toEqual([]);
  });
});
