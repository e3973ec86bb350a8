import { describe, expect, it } from 'vitest';
import { expectWholeEvents } from './helpers/api.js';
import { ORDERS_SECRET, useRunsStack } from './helpers/stack.js';

// The same flows on the embedded database: `mt serve` with no DATABASE_URL and --data in a temporary
// folder runs the API and the worker on PGlite.
const stack = useRunsStack({ pglite: true }, { timeoutMs: 120_000 });

describe('runs on PGlite (mt serve without DATABASE_URL)', { timeout: 60_000 }, () => {
  it('runs the weather flow to its answer', async () => {
    expect(stack.servers[0].log()).toContain('PGlite');
    const started = await stack.api.startRun('weather', { place: 'London' });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const run = await stack.api.waitForEnd(started.body.id);
    expect(run.status, JSON.stringify(run)).toBe('Completed');
    expect(run.result).toContain('21.5');
    const calls = stack.upstream.requests.filter((r) => r.url.includes('latitude=51.5'));
    expect(calls).toHaveLength(1);
    expect(calls[0].url).toContain('temperature_unit=celsius');
    expectWholeEvents(await stack.api.events(run.id));
  });

  it('runs the support flow with the secret and several runs at once', async () => {
    const ids = await Promise.all(
      ['C-3001', 'C-3002', 'C-3003'].map(async (order) => {
        const r = await stack.api.startRun('support-desk', { message: `Where is my order ${order}?` });
        expect(r.status, JSON.stringify(r.body)).toBe(201);
        return r.body.id;
      }),
    );
    for (const id of ids) {
      const run = await stack.api.waitForEnd(id);
      expect(run.status, JSON.stringify(run)).toBe('Completed');
      expect(run.result).toContain('delivered');
    }
    for (const order of ['C-3001', 'C-3002', 'C-3003']) {
      const calls = stack.upstream.requests.filter((r) => r.url === `/orders/${order}`);
      expect(calls).toHaveLength(1);
      expect(calls[0].headers['x-api-key']).toBe(ORDERS_SECRET);
    }
  });
});
