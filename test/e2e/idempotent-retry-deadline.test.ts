import { Maitento } from '@maitento/sdk';
import { holdLock } from '@maitento/testkit';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { useRunsStack } from './helpers/stack.js';

// Issue #41 item 1, as it was shown: another session holds a lock on mt_run_events for 4 s while the SDK starts a
// run with one Idempotency-Key, retrying 503 with the same key. Each attempt's statement waits on the lock past
// its deadline; before the fix the client gave up at 1.5 s, answered 503 and released the key, and PostgreSQL
// committed every waiting statement once the lock went: one request, three runs. PostgreSQL now ends the statement
// itself before the client's deadline, so a 503 means "not done" and the retry that finally runs is the only run.
const stack = useRunsStack({ servers: 1 }, { timeoutMs: 120_000 });

describe('one Idempotency-Key, retried through a 4 s lock', { timeout: 60_000 }, () => {
  it('starts exactly one run, and the answer that succeeds is that run', async () => {
    const url = stack.db!.url;
    const statuses: number[] = [];
    const client = new Maitento({
      baseUrl: stack.servers[0]!.url,
      apiKey: stack.adminKey,
      maxRetries: 6,
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        statuses.push(response.status);
        return response;
      },
    });
    const held = await holdLock(url, 'mt_run_events', 4_000);
    const began = performance.now();
    const run = await client.request<{ id: string }>(
      { method: 'POST', path: '/v1/interactions/weather/runs', body: { inputs: { place: 'London' } } },
      { idempotencyKey: 'issue-41-item-1' },
    );
    const ms = performance.now() - began;
    await held.released;
    // Every statement that waited on the lock has ended by now, one way or the other.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    try {
      const { rows } = await db.query<{ id: string }>('SELECT id FROM mt_runs');
      expect({ runs: rows.map((r) => r.id), statuses }).toEqual({ runs: [run.id], statuses: expect.anything() });
      // Retried through the lock: at least one 503 before the 201, and the 201 once the lock was gone.
      expect(statuses.at(-1)).toBe(201);
      expect(statuses.slice(0, -1).every((s) => s === 503)).toBe(true);
      expect(ms).toBeGreaterThan(3_500);
    } finally {
      await db.end();
    }
  });
});
