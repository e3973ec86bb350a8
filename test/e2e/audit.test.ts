import { randomUUID } from 'node:crypto';
import type { AuditEntry } from '@maitento/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Api, api, type ApprovalView } from './helpers/api.js';
import { runsRepoFiles } from './helpers/config-repo.js';
import { ORDERS_SECRET, type RunsStack, startRunsStack } from './helpers/stack.js';
import { runMt } from './support/harness.js';

// The audit log end to end on PostgreSQL with the real `mt serve` (docs/audit.md): every audited action makes one
// row with its actor, a failed change makes none, the JSON Lines export round-trips, paging and filters hold, and no
// secret value written or rotated ever appears in a row or the export (the leak canary).

const CANARY_CREATE = `canary-create-${randomUUID()}`;
const CANARY_ROTATE = `canary-rotate-${randomUUID()}`;

let stack: RunsStack;
let admin: Api;
let adminId: string;

/** Every audit row of the admin's namespace, oldest first, by paging `GET /v1/audit` (`limit` a page). */
async function allRows(query = '', limit = 50): Promise<AuditEntry[]> {
  const rows: AuditEntry[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 100; page++) {
    const sep = query === '' ? '' : '&';
    const r = await admin.request<{ entries: AuditEntry[]; nextCursor: string | null }>(
      'GET',
      `/v1/audit?${query}${sep}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    rows.push(...r.body.entries);
    cursor = r.body.nextCursor;
    if (cursor === null) return rows.reverse();
  }
  throw new Error('more than 100 pages');
}

const byAction = (rows: AuditEntry[], action: string) => rows.filter((row) => row.action === action);

/** A request with an X-Request-Id of our own, as a load balancer would send it. */
async function withRequestId(method: string, path: string, body: unknown, requestId: string, key = stack.adminKey) {
  const res = await fetch(`${stack.servers[0].url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-request-id': requestId },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

beforeAll(async () => {
  stack = await startRunsStack({ servers: 1, workers: 0 });
  admin = stack.api;
  const keys = await admin.request<{ id: string; role: string }[]>('GET', '/v1/keys');
  adminId = keys.body.find((key) => key.role === 'admin')!.id;
}, 90_000);

afterAll(async () => {
  await stack?.close();
});

describe('the audit log', { timeout: 60_000 }, () => {
  it('records every change once with its actor, and nothing for a change that failed', async () => {
    const before = await allRows();
    // What the stack's set-up did with the admin key: the orders secret and the deploy (each one row), and the
    // migrations of the database (the system's).
    expect(byAction(before, 'secret.created')).toHaveLength(1);
    expect(byAction(before, 'secret.created')[0]).toMatchObject({
      actor: { kind: 'key', id: adminId, role: 'admin', via: 'api' },
      target: { kind: 'secret' },
      after: { name: 'orders-api-key' },
    });
    const deployed = byAction(before, 'deploy.applied');
    expect(deployed).toHaveLength(1);
    expect(deployed[0].actor).toMatchObject({ kind: 'key', id: adminId, role: 'admin' });
    const versions = deployed[0].after?.versions as { kind: string; name: string; version: number }[];
    expect(versions).toContainEqual(expect.objectContaining({ kind: 'tool', name: 'refund-order', version: 1 }));
    // Versions record who deployed them.
    const listed = await admin.request('GET', '/v1/extops/refund-order/versions');
    expect(listed.body[0]).toMatchObject({ version: 1, deployedBy: adminId });

    // A deploy that changes nothing, one with errors and a dry run: no row.
    await admin.deploy(runsRepoFiles({ origin: stack.upstream.origin }));
    const refused = await admin.request('POST', '/v1/deploy', {
      files: [{ path: 'connectors/x.mtr', content: 'method = ' }],
    });
    expect(refused.status).toBe(422);
    const dry = await admin.request('POST', '/v1/deploy', {
      files: runsRepoFiles({ origin: `${stack.upstream.origin}/v2` }),
      dryRun: true,
    });
    expect(dry.status).toBe(200);

    // Keys: created (with a request id of our own), then deleted; deleting a missing one is 404 and no row.
    const requestId = `audit-e2e-${randomUUID()}`;
    const made = await withRequestId('POST', '/v1/keys', { name: 'desk', role: 'user' }, requestId);
    expect(made.status).toBe(201);
    const userKey = made.body as { id: string; key: string };
    const missing = await admin.request('DELETE', `/v1/keys/${randomUUID()}`);
    expect(missing.status).toBe(404);

    // Secrets: created, rotated and deleted with canary values; a rotation of a missing one is 404 and no row.
    const secret = await admin.request('POST', '/v1/secrets', { name: 'canary', value: CANARY_CREATE });
    expect(secret.status).toBe(201);
    const rotated = await admin.request('PUT', `/v1/secrets/${secret.body.id}`, { value: CANARY_ROTATE });
    expect(rotated.status).toBe(200);
    expect((await admin.request('PUT', `/v1/secrets/${randomUUID()}`, { value: CANARY_ROTATE })).status).toBe(404);
    expect((await admin.request('DELETE', `/v1/secrets/${secret.body.id}`)).status).toBe(204);
    const taken = await admin.request('POST', '/v1/secrets', { name: 'orders-api-key', value: CANARY_CREATE });
    expect(taken.status).toBe(409);

    // Enable/disable of a version; a missing version is 404 and no row.
    expect((await admin.request('POST', '/v1/extops/refund-order/versions/1/disable')).status).toBe(200);
    expect((await admin.request('POST', '/v1/extops/refund-order/versions/1/enable')).status).toBe(200);
    expect((await admin.request('POST', '/v1/extops/refund-order/versions/9/disable')).status).toBe(404);

    // A namespace (by the operator's key); one already there is 409 and no row.
    expect((await admin.request('POST', '/v1/namespaces', { name: 'audited' })).status).toBe(201);
    expect((await admin.request('POST', '/v1/namespaces', { name: 'audited' })).status).toBe(409);

    // An approval answered by the user key; a second answer is 409 and no row.
    const user = api(stack.servers[0].url, userKey.key);
    const run = await admin.startRun('support-desk', {
      message: 'The lamp of order A-2001 arrived broken, please refund it.',
    });
    expect(run.status, JSON.stringify(run.body)).toBe(201);
    const waiting = await admin.waitForRun(run.body.id, (r) => r.status === 'PendingApproval');
    const approval = waiting.pendingApproval as ApprovalView;
    expect((await user.request('POST', `/v1/approvals/${approval.id}/approve`, {})).status).toBe(200);
    expect((await user.request('POST', `/v1/approvals/${approval.id}/approve`, {})).status).toBe(409);
    // A user key may not read the audit log.
    expect((await user.request('GET', '/v1/audit')).status).toBe(403);
    await admin.waitForEnd(run.body.id);

    // A run cancelled; cancelling it again is 409 and no row.
    const other = await admin.startRun('support-desk', {
      message: 'The lamp of order A-2002 arrived broken, please refund it.',
    });
    await admin.waitForRun(other.body.id, (r) => r.status === 'PendingApproval');
    expect((await admin.request('POST', `/v1/runs/${other.body.id}/cancel`)).status).toBe(200);
    expect((await admin.request('POST', `/v1/runs/${other.body.id}/cancel`)).status).toBe(409);

    expect((await admin.request('DELETE', `/v1/keys/${userKey.id}`)).status).toBe(204);

    // `mt runs-prune` deletes the ended runs, as the system.
    const prune = await runMt(['runs-prune', '--before', '2999-01-01', '--json'], {
      home: stack.home,
      env: { DATABASE_URL: stack.env.DATABASE_URL },
    });
    expect(prune.code, prune.stderr).toBe(0);
    expect(JSON.parse(prune.stdout).runs).toBe(2);

    const rows = (await allRows()).slice(before.length);
    const admins = { kind: 'key', id: adminId, role: 'admin', via: 'api' };
    expect(rows.map((row) => row.action)).toEqual([
      'key.created',
      'secret.created',
      'secret.rotated',
      'secret.deleted',
      'version.disabled',
      'version.enabled',
      'namespace.created',
      'approval.approved',
      'run.cancelled',
      'key.deleted',
      'runs.pruned',
    ]);
    const [
      keyMade,
      secretMade,
      secretRotated,
      secretGone,
      disabled,
      enabled,
      ns,
      approved,
      cancelled,
      keyGone,
      pruned,
    ] = rows;
    expect(keyMade).toMatchObject({
      actor: admins,
      target: { kind: 'key', id: userKey.id },
      after: { name: 'desk', role: 'user' },
      requestId,
      namespace: 'default',
    });
    expect(secretMade).toMatchObject({ actor: admins, target: { id: secret.body.id }, after: { name: 'canary' } });
    expect(secretRotated).toMatchObject({ actor: admins, target: { kind: 'secret', id: secret.body.id } });
    expect(secretGone).toMatchObject({ actor: admins, before: { name: 'canary' } });
    expect(disabled).toMatchObject({
      actor: admins,
      target: { kind: 'tool', id: 'refund-order@1' },
      before: { enabled: true },
      after: { enabled: false },
    });
    expect(enabled).toMatchObject({ before: { enabled: false }, after: { enabled: true } });
    expect(ns).toMatchObject({ actor: admins, target: { kind: 'namespace', id: 'audited' } });
    expect(approved).toMatchObject({
      actor: { kind: 'key', id: userKey.id, role: 'user', via: 'api' },
      target: { kind: 'approval', id: approval.id },
      after: { status: 'Approved', tool: 'refund-order', runId: run.body.id },
    });
    expect(cancelled).toMatchObject({ actor: admins, target: { kind: 'run', id: other.body.id } });
    expect(keyGone).toMatchObject({ actor: admins, before: { name: 'desk', role: 'user' } });
    expect(pruned).toMatchObject({
      actor: { kind: 'system', id: 'system', role: null, via: 'runs-prune' },
      action: 'runs.pruned',
      after: { runs: 2 },
    });
    // Every row that came from a request carries its id.
    for (const row of rows.slice(0, -1)) expect(row.requestId).toBeTruthy();
    // The migrations of the database: one row, the system's.
    const migrated = await admin.request<{ entries: AuditEntry[] }>('GET', '/v1/audit?action=schema');
    expect(migrated.body.entries).toHaveLength(1);
    expect(migrated.body.entries[0]).toMatchObject({ actor: { kind: 'system', via: 'migrate' } });
  });

  it('exports JSON Lines that parse back to the same rows, with no secret value in any row (leak canary)', async () => {
    const res = await fetch(`${stack.servers[0].url}/v1/audit/export`, {
      headers: { authorization: `Bearer ${stack.adminKey}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/jsonl/);
    const text = await res.text();
    expect(text.endsWith('\n')).toBe(true);
    const exported = text
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as AuditEntry);
    const paged = await allRows('', 7);
    expect(exported).toEqual(paged);
    expect(exported.length).toBeGreaterThan(10);
    for (const value of [CANARY_CREATE, CANARY_ROTATE, ORDERS_SECRET, stack.adminKey]) {
      expect(text).not.toContain(value);
      expect(JSON.stringify(paged)).not.toContain(value);
    }
  });

  it('mt audit prints a page, filters by action and --since, and --jsonl exports what the route does', async () => {
    const env = { MT_API_URL: stack.servers[0].url, MT_API_KEY: stack.adminKey };
    const listed = await runMt(['audit', '--json', '--action', 'secret', '--since', '2000-01-01'], {
      home: stack.home,
      env,
    });
    expect(listed.code, listed.stderr).toBe(0);
    const page = JSON.parse(listed.stdout) as { entries: AuditEntry[] };
    expect(page.entries.map((e) => e.action)).toEqual((await allRows('action=secret')).reverse().map((e) => e.action));
    const future = await runMt(['audit', '--json', '--since', '2999-01-01'], { home: stack.home, env });
    expect(JSON.parse(future.stdout).entries).toEqual([]);
    const exported = await runMt(['audit', '--jsonl'], { home: stack.home, env });
    expect(exported.code, exported.stderr).toBe(0);
    const rows = exported.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as AuditEntry);
    expect(rows).toEqual(await allRows());
    const table = await runMt(['audit', '--action', 'key.created'], { home: stack.home, env });
    expect(table.stdout).toMatch(/key\.created\s+key:/);
    const bad = await runMt(['audit', '--since', '2026-02-30'], { home: stack.home, env });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('api:cli:date-invalid');
  });

  it('filters by action prefix, actor, target and time, and refuses a cursor it did not give', async () => {
    const all = await allRows();
    const secrets = await allRows('action=secret');
    expect(secrets.map((row) => row.action)).toEqual(
      all.filter((row) => row.action.startsWith('secret.')).map((row) => row.action),
    );
    expect(await allRows('action=secret.rotated')).toHaveLength(1);
    expect(await allRows('action=secre')).toHaveLength(0);
    const system = await allRows('actor=system');
    expect(system.length).toBeGreaterThan(0);
    expect(system.every((row) => row.actor.kind === 'system')).toBe(true);
    const tool = await allRows(`target=${encodeURIComponent('tool:refund-order@1')}`);
    expect(tool.map((row) => row.action)).toEqual(['version.disabled', 'version.enabled']);
    const middle = all[Math.floor(all.length / 2)];
    const since = await allRows(`since=${encodeURIComponent(middle.at)}`);
    const until = await allRows(`until=${encodeURIComponent(middle.at)}`);
    expect(since.length + until.length).toBe(all.length);
    expect(since.every((row) => row.at >= middle.at) && until.every((row) => row.at < middle.at)).toBe(true);
    const bad = await admin.request('GET', '/v1/audit?cursor=bm90LWEtY3Vyc29y');
    expect(bad.status).toBe(422);
    expect(bad.body.code).toBe('api:audit:cursor-invalid');
  });
});
