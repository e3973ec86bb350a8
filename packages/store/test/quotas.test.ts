import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isMtError } from '@maitento/errors';
import {
  admitRunUnderQuotas,
  createNamespace,
  createPgDb,
  createPgliteDb,
  type Db,
  insertRun,
  migrate,
  quotaStanding,
  setNamespaceQuotas,
  tokenQuotaRefusal,
  toolCallQuotaRefusal,
  usageFigures,
} from '@maitento/store';
import { createTestDatabase, type TestDatabase } from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Quotas per namespace (docs/quotas.md; decision 0345): held to the figures of GET /v1/usage, a run start
// admitted under the namespace's lock, on PostgreSQL (two pools stand for two processes) and PGlite (mt serve --data).
let database: TestDatabase;
let pg: Db[] = [];
let pglite: Db;
let dir: string;

beforeAll(async () => {
  database = await createTestDatabase('mt_store_quotas', { migrated: true });
  pg = [createPgDb(database.url), createPgDb(database.url)];
  await migrate(pg[0]!);
  dir = mkdtempSync(join(tmpdir(), 'mt-quotas-pglite-'));
  pglite = await createPgliteDb(join(dir, 'db'));
  await migrate(pglite);
});

afterAll(async () => {
  await Promise.all([...pg, pglite].map((db) => db?.close()));
  await database?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Starts a run as the engine does: admitted under the quotas in the transaction that stores it. */
async function start(db: Db, namespace: string): Promise<string> {
  const id = randomUUID();
  await db.transaction(async (tx) => {
    await admitRunUnderQuotas(tx, namespace);
    await insertRun(
      tx,
      { id, namespace, interaction: 'i', interactionVersion: 1, versions: {}, inputs: {}, interactive: false },
      { type: 'run-started', data: {} },
    );
  });
  return id;
}

async function toolResult(db: Db, runId: string, seq: number, name: string, code: string | null): Promise<void> {
  await db.query("INSERT INTO mt_run_events (run_id, seq, type, data) VALUES ($1, $2, 'tool-result', $3::json)", [
    runId,
    seq,
    JSON.stringify({ toolCallId: `c${seq}`, index: 0, name, ok: code === null, code }),
  ]);
}

describe.each([
  ['PostgreSQL', () => pg],
  ['PGlite', () => [pglite]],
])('quotas on %s', (_, dbs) => {
  it('admits exactly the runs a day left, then refuses with the seconds to the UTC day’s end', async () => {
    const [db, other = db] = dbs() as [Db, Db?];
    const ns = `q-runs-${randomUUID().slice(0, 8)}`;
    await createNamespace(db, ns);
    await start(db, ns);
    await setNamespaceQuotas(db, ns, { runsPerDay: 4, toolCallsPerDay: null, tokensPerMonth: null });
    const outcomes = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => start(i % 2 ? other : db, ns)));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(3);
    for (const o of outcomes.filter((o) => o.status === 'rejected')) {
      const error = (o as PromiseRejectedResult).reason;
      expect(isMtError(error) && error.code).toBe('api:quota:runs-exceeded');
      const seconds = (error.details as { retryAfterSeconds: number }).retryAfterSeconds;
      expect(seconds).toBeGreaterThan(0);
      expect(seconds).toBeLessThanOrEqual(86_400);
    }
    const standing = await quotaStanding(db, ns);
    expect(standing.used.runsToday).toBe(4);
    const [usage] = await usageFigures(db, ns, { since: `${new Date().toISOString().slice(0, 10)}T00:00:00Z` });
    expect(usage?.runs).toBe(4);
    expect(new Date(standing.dayEndsAt).getTime() - Date.now()).toBeLessThanOrEqual(86_400_000);
  });

  it('holds tool calls and tokens to the usage figures, a refused call counted by neither', async () => {
    const [db] = dbs() as [Db];
    const ns = `q-calls-${randomUUID().slice(0, 8)}`;
    await createNamespace(db, ns);
    const quotas = { runsPerDay: null, toolCallsPerDay: 3, tokensPerMonth: 1000 };
    await setNamespaceQuotas(db, ns, quotas);
    const run = await start(db, ns);
    await toolResult(db, run, 2, 'a', null);
    await toolResult(db, run, 3, 'b', 'api:gateway:request-invalid');
    expect(await toolCallQuotaRefusal(db, ns, quotas)).toBeUndefined();
    await toolResult(db, run, 4, 'a', null);
    const refused = await toolCallQuotaRefusal(db, ns, quotas);
    expect(refused?.code).toBe('api:quota:tool-calls-exceeded');
    await toolResult(db, run, 5, 'a', 'api:quota:tool-calls-exceeded');
    expect((await quotaStanding(db, ns)).used.toolCallsToday).toBe(3);
    expect(await usageFigures(db, ns, { by: 'tool' })).toEqual([
      { key: 'a', runs: 1, toolCalls: 2, inputTokens: 0, outputTokens: 0, costUsd: 0 },
      { key: 'b', runs: 1, toolCalls: 1, inputTokens: 0, outputTokens: 0, costUsd: 0 },
    ]);
    // A new run is refused at its start once the day's calls are spent.
    await expect(start(db, ns)).rejects.toMatchObject({ code: 'api:quota:tool-calls-exceeded' });

    expect(await tokenQuotaRefusal(db, ns, quotas)).toBeUndefined();
    await db.query('UPDATE mt_runs SET input_tokens = 700, output_tokens = 300 WHERE id = $1', [run]);
    expect((await tokenQuotaRefusal(db, ns, quotas))?.code).toBe('api:quota:tokens-exceeded');
    expect((await quotaStanding(db, ns)).used.tokensThisMonth).toBe(1000);
    // Every quota left out removes them: nothing is refused.
    await setNamespaceQuotas(db, ns, { runsPerDay: null, toolCallsPerDay: null, tokensPerMonth: null });
    await start(db, ns);
  });
});
