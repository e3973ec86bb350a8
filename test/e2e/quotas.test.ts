import { createFakeOpenAI, type FakeModelRequest, type FakeModelServer, type FakeTurn } from '@maitento/testkit';
import { describe, expect, it } from 'vitest';
import { type Api, api } from './helpers/api.js';
import { runsRepoFiles } from './helpers/config-repo.js';
import { ORDERS_SECRET, startRunsStack, useRunsStack } from './helpers/stack.js';
import { runMt } from './support/harness.js';

// Issue #46, quotas per namespace and usage by tool: two real `mt serve` processes on one PostgreSQL database, the
// agents' model the fake OpenAI-compatible server (300 input + 100 output tokens a turn), the weather tool's upstream
// a real HTTP server that counts its requests.
const STEP = { input: 300, output: 100 };

let model: FakeModelServer;

/**
 * The weather agent (and the weather helper) calls current-weather `[calls:N]` times (once a turn, whatever each call
 * answered), then answers.
 */
function weatherTurns(request: FakeModelRequest): FakeTurn {
  const c = request.conversation;
  // The delegating agent hands the look-up to the weather helper (agents as tools), then answers.
  if (c.tools.some((t) => t.name === 'weather-helper')) {
    if (c.toolResults.length === 0) {
      return { toolCalls: [{ name: 'weather-helper', arguments: { task: 'Look it up [calls:5]' } }], usage: STEP };
    }
    return { text: `Delegated: ${c.toolResults[0]?.content}`, usage: STEP };
  }
  const calls = Number(/\[calls:(\d+)\]/.exec(c.userTexts.join('\n'))?.[1] ?? 1);
  if (c.toolResults.length < calls) {
    const additionalInputs = { 'query.latitude': 51.5, 'query.longitude': -0.13 };
    return { toolCalls: [{ name: 'current-weather', arguments: { additionalInputs } }], usage: STEP };
  }
  return { text: `Done after ${c.toolResults.length} calls`, usage: STEP };
}

const stack = useRunsStack(
  async () => {
    model = await createFakeOpenAI({ respond: weatherTurns });
    return startRunsStack({ servers: 2, env: { OPENAI_BASE_URL: model.url } });
  },
  { closing: () => model.close() },
);

const weatherCalls = () => stack.upstream.requests.filter((r) => r.url.includes('/forecast')).length;

/** A namespace of its own (made by the operator, the stack's admin key of `default`) with the runs repo deployed. */
async function namespace(name: string): Promise<{ api: Api; key: string }> {
  const created = await stack.api.request('POST', '/v1/namespaces', { name });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const key = created.body.key.key as string;
  const client = api(stack.servers[0].url, key);
  const secret = await client.request('POST', '/v1/secrets', { name: 'orders-api-key', value: ORDERS_SECRET });
  expect(secret.status, JSON.stringify(secret.body)).toBe(201);
  await client.deploy(runsRepoFiles({ origin: stack.upstream.origin }));
  return { api: client, key };
}

/** A raw request, to read its headers. */
async function raw(url: string, key: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}

/** Seconds from now to the next UTC midnight (or month start), as the server's Retry-After should say. */
function secondsTo(kind: 'day' | 'month'): number {
  const now = new Date();
  const end =
    kind === 'day'
      ? Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1)
      : Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
  return (end - now.getTime()) / 1000;
}

const setQuotas = (name: string, quotas: Record<string, number | null>) =>
  stack.api.request('PUT', `/v1/namespaces/${name}/quotas`, quotas);

describe('usage figures by tool', () => {
  it('match a count of upstream requests and of the fake model’s tokens exactly over 200 runs', async () => {
    const { api: ns, key } = await namespace('usage-count');
    const [requestsBefore, callsBefore] = [model.requests.length, weatherCalls()];
    // 200 runs of 0 to 4 calls each (issue #46, test 3), 20 at a time, started on both servers.
    const started: string[] = [];
    let expectedCalls = 0;
    let calling = 0;
    for (let batch = 0; batch < 10; batch += 1) {
      const ids = await Promise.all(
        Array.from({ length: 20 }, async (_, i) => {
          const calls = (batch + i) % 5;
          expectedCalls += calls;
          if (calls > 0) calling += 1;
          const client = api(stack.servers[i % 2].url, key);
          const r = await client.startRun('weather', { place: `Town ${batch}-${i} [calls:${calls}]` });
          expect(r.status, JSON.stringify(r.body)).toBe(201);
          return r.body.id as string;
        }),
      );
      for (const id of ids) expect((await ns.waitForEnd(id, 60_000)).status).toBe('Completed');
      started.push(...ids);
    }
    const upstreamCalls = weatherCalls() - callsBefore;
    const modelRequests = model.requests.length - requestsBefore;
    expect(upstreamCalls).toBe(expectedCalls);
    // Each run asks the model once per call and once for its answer.
    expect(modelRequests).toBe(expectedCalls + started.length);

    const byTool = await ns.request('GET', '/v1/usage?by=tool');
    expect(byTool.status, JSON.stringify(byTool.body)).toBe(200);
    expect(byTool.body.by).toBe('tool');
    expect(byTool.body.groups).toEqual([
      {
        key: 'current-weather',
        runs: calling,
        toolCalls: upstreamCalls,
        inputTokens: 0,
        outputTokens: 0,
        costUsd: 0,
      },
    ]);
    const all = (await ns.request('GET', '/v1/usage')).body.groups;
    expect(all).toEqual([
      {
        key: 'usage-count',
        runs: started.length,
        toolCalls: upstreamCalls,
        inputTokens: STEP.input * modelRequests,
        outputTokens: STEP.output * modelRequests,
        costUsd: 0,
      },
    ]);
    // The quotas' figures are the same (no quota set: all none).
    const quotas = await ns.request('GET', '/v1/quotas');
    expect(quotas.status, JSON.stringify(quotas.body)).toBe(200);
    expect(quotas.body.quotas).toEqual({ runsPerDay: null, toolCallsPerDay: null, tokensPerMonth: null });
    expect(quotas.body.used).toEqual({
      runsToday: started.length,
      toolCallsToday: upstreamCalls,
      tokensThisMonth: (STEP.input + STEP.output) * modelRequests,
    });

    const cli = await runMt(['usage', '--by', 'tool'], {
      home: stack.home,
      env: { MT_API_URL: stack.servers[1].url, MT_API_KEY: key },
    });
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toMatch(/^TOOL +RUNS +TOOL CALLS +INPUT TOKENS +OUTPUT TOKENS +COST$/m);
    expect(cli.stdout).toMatch(new RegExp(`^current-weather +${calling} +${upstreamCalls} +0 +0 +\\$`, 'm'));
  }, 120_000);
});

describe('quotas per namespace', () => {
  it('is set by the operator only, audited, and shown by mt quotas', async () => {
    const { api: ns, key } = await namespace('quota-admin');
    // A namespace's own admin may read its quotas, not set them.
    const own = await ns.request('PUT', '/v1/namespaces/quota-admin/quotas', { runsPerDay: 5 });
    expect(own.status).toBe(403);
    const missing = await setQuotas('no-such-namespace', { runsPerDay: 5 });
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('api:namespaces:not-found');
    const invalid = await setQuotas('quota-admin', { runsPerDay: -1 });
    expect(invalid.status).toBe(400);

    const env = { MT_API_URL: stack.servers[0].url, MT_API_KEY: stack.adminKey };
    const set = await runMt(['quota-set', 'quota-admin', '--runs-per-day', '5', '--tokens-per-month', '90000'], {
      home: stack.home,
      env,
    });
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toMatch(/^runs a day +0 +5 /m);
    expect(set.stdout).toMatch(/^tool calls a day +0 +none /m);
    expect(set.stdout).toMatch(/^tokens a month +0 +90000 /m);
    const shown = await runMt(['quotas', '--json'], {
      home: stack.home,
      env: { MT_API_URL: stack.servers[1].url, MT_API_KEY: key },
    });
    expect(shown.code, shown.stderr).toBe(0);
    expect(JSON.parse(shown.stdout).quotas).toEqual({ runsPerDay: 5, toolCallsPerDay: null, tokensPerMonth: 90000 });
    const audit = await stack.api.request('GET', '/v1/audit?action=namespace.quotas-set&target=namespace:quota-admin');
    expect(audit.body.entries).toHaveLength(1);
    expect(audit.body.entries[0].before).toEqual({ runsPerDay: null, toolCallsPerDay: null, tokensPerMonth: null });
    expect(audit.body.entries[0].after).toEqual({ runsPerDay: 5, toolCallsPerDay: null, tokensPerMonth: 90000 });
    // Leaving every quota out removes them.
    const cleared = await setQuotas('quota-admin', {});
    expect(cleared.body.quotas).toEqual({ runsPerDay: null, toolCallsPerDay: null, tokensPerMonth: null });
  });

  it('admits exactly its runs a day across two servers at once, then answers 429 with Retry-After', async () => {
    const { api: ns, key } = await namespace('quota-runs');
    const first = await ns.startRun('weather', { place: 'Oslo [calls:0]' });
    expect(first.status).toBe(201);
    const set = await setQuotas('quota-runs', { runsPerDay: 4 });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body.used.runsToday).toBe(1);
    // 12 starts at once on two servers: exactly 3 more are admitted.
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        raw(stack.servers[i % 2].url, key, 'POST', '/v1/interactions/weather/runs', {
          inputs: { place: `Bergen ${i} [calls:0]` },
        }),
      ),
    );
    expect(answers.filter((a) => a.status === 201)).toHaveLength(3);
    const refused = answers.filter((a) => a.status !== 201);
    expect(refused).toHaveLength(9);
    for (const r of refused) {
      expect(r.status).toBe(429);
      expect(r.body.code).toBe('api:quota:runs-exceeded');
      expect(r.body.error).toMatch(/^Namespace quota-runs has started its 4 runs of the day \(UTC day, 4 so far\)/);
      const retryAfter = Number(r.headers.get('retry-after'));
      expect(Math.abs(retryAfter - secondsTo('day'))).toBeLessThan(10);
    }
    const usage = await ns.request('GET', '/v1/usage');
    expect(usage.body.groups[0].runs).toBe(4);
    // Raised by the operator: starts are admitted again.
    await setQuotas('quota-runs', { runsPerDay: 5 });
    expect((await ns.startRun('weather', { place: 'Tromsø [calls:0]' })).status).toBe(201);
    expect((await ns.startRun('weather', { place: 'Narvik [calls:0]' })).status).toBe(429);
  });

  it('fails the tool calls of a run over its tool calls a day with a message the model reads', async () => {
    const { api: ns, key } = await namespace('quota-tools');
    await setQuotas('quota-tools', { toolCallsPerDay: 2 });
    const callsBefore = weatherCalls();
    const started = await ns.startRun('weather', { place: 'Lisbon [calls:4]' });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const run = await ns.waitForEnd(started.body.id);
    expect(run.status).toBe('Completed');
    expect(run.result).toBe('Done after 4 calls');
    // Two calls were made, two refused without reaching the upstream.
    expect(weatherCalls() - callsBefore).toBe(2);
    const results = (await ns.events(run.id)).filter((e) => e.type === 'tool-result');
    expect(results.map((e) => e.data.code)).toEqual([
      null,
      null,
      'api:quota:tool-calls-exceeded',
      'api:quota:tool-calls-exceeded',
    ]);
    // The model was sent the refusal.
    const last = model.requests.filter((r) => r.conversation.userTexts.join('\n').includes('Lisbon')).at(-1)!;
    expect(last.conversation.toolResults.at(-1)?.content).toContain(
      'Namespace quota-tools has made its 2 tool calls of the day (UTC day, 2 so far): the call was not made',
    );
    // Usage counts the calls made, not the refused ones; a new run is refused at its start.
    const usage = await ns.request('GET', '/v1/usage?by=tool');
    expect(usage.body.groups).toEqual([expect.objectContaining({ key: 'current-weather', runs: 1, toolCalls: 2 })]);
    const refused = await raw(stack.servers[1].url, key, 'POST', '/v1/interactions/weather/runs', {
      inputs: { place: 'Porto' },
    });
    expect(refused.status).toBe(429);
    expect(refused.body.code).toBe('api:quota:tool-calls-exceeded');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('stops a run before its next model turn once the month’s tokens are spent', async () => {
    const { api: ns, key } = await namespace('quota-tokens');
    await setQuotas('quota-tokens', { tokensPerMonth: 1000 });
    const started = await ns.startRun('weather', { place: 'Rome [calls:5]' });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const run = await ns.waitForEnd(started.body.id);
    // 400 tokens a turn: three turns (1,200), and no fourth.
    expect(run.status).toBe('Failed');
    expect(run.error?.code).toBe('api:quota:tokens-exceeded');
    expect(run.error?.message).toMatch(
      /^Namespace quota-tokens has spent its 1000 model tokens of the month \(UTC month, 1200 so far\)/,
    );
    expect((await ns.events(run.id)).filter((e) => e.type === 'model-response')).toHaveLength(3);
    const refused = await raw(stack.servers[0].url, key, 'POST', '/v1/interactions/weather/runs', {
      inputs: { place: 'Milan' },
    });
    expect(refused.status).toBe(429);
    expect(refused.body.code).toBe('api:quota:tokens-exceeded');
    expect(Math.abs(Number(refused.headers.get('retry-after')) - secondsTo('month'))).toBeLessThan(10);
    const standing = await ns.request('GET', '/v1/quotas');
    expect(standing.body.used.tokensThisMonth).toBe(1200);
    expect(standing.body.monthEndsAt).toBe(
      new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth() + 1, 1)).toISOString(),
    );
  });
});

/** A delegating agent that hands the look-up to a weather helper (agents as tools), in an interaction with `budget`. */
function delegation(budget: string): { path: string; content: string }[] {
  const agentFile = (summary: string, functions: string) =>
    `model = "openai:gpt-4o-mini"\ninstructions = "You do your part."\nsummary = "${summary}"\nfunctions = [ ${functions} ]\n`;
  return [
    {
      path: 'agents/weather-helper.mtr',
      content: agentFile('Looks up the weather', '{ ref = @ref("current-weather") }'),
    },
    { path: 'agents/weather-delegate.mtr', content: agentFile('Delegates', '{ agent = @ref("weather-helper") }') },
    {
      path: 'interactions/one-shot/delegated.mtr',
      content:
        'agent = { name = "Delegated" agent = @ref("weather-delegate") }\ntask = "Weather in %%place%%"\n' +
        `inputs.prompts = [ { name = "place" required = true } ]\n${budget}\n`,
    },
  ];
}

describe("a parent run's budget", () => {
  it('covers its child runs: the child stops once the parent’s budget is reached, then the parent', async () => {
    const { api: ns } = await namespace('tree-budget');
    await ns.deploy([
      ...runsRepoFiles({ origin: stack.upstream.origin }),
      ...delegation('budget = { tokens = 1000 onExceeded = "fail" }'),
    ]);
    const started = await ns.startRun('delegated', { place: 'Oslo' });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const parent = await ns.waitForEnd(started.body.id);
    // The parent's turn (400), the child's two turns (800, 1,200): the child's third is not asked for.
    const children = (await ns.request('GET', '/v1/runs?limit=50')).body.runs.filter(
      (r: { parentRunId: string | null }) => r.parentRunId === parent.id,
    );
    expect(children).toHaveLength(1);
    const child = await ns.getRun(children[0].id);
    expect(child.status).toBe('Failed');
    expect(child.error?.code).toBe('api:runs:ancestor-budget-exceeded');
    expect(child.error?.message).toBe(
      `The budget of run ${parent.id} (1000 tokens), which this run works for, is reached: its runs spent 1200 tokens, $0 USD`,
    );
    expect(child.usage).toMatchObject({ inputTokens: 600, outputTokens: 200 });
    // The parent read its child's failure as the call's result, then stopped by its own budget before its next turn.
    expect(parent.status).toBe('Failed');
    expect(parent.error?.code).toBe('api:runs:budget-exceeded');
    expect(parent.error?.message).toBe('The run reached its budget (1000 tokens): it spent 1200 tokens, $0 USD');
    const parentTurns = (await ns.events(parent.id)).filter((e) => e.type === 'model-response');
    expect(parentTurns).toHaveLength(1);
  });

  it('waits with its children’s spend counted, and an extension above it resumes the parent', async () => {
    const { api: ns } = await namespace('tree-budget-wait');
    await ns.deploy([
      ...runsRepoFiles({ origin: stack.upstream.origin }),
      ...delegation('budget = { tokens = 1000 onExceeded = "wait" }'),
    ]);
    const started = await ns.startRun('delegated', { place: 'Bergen' });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const id = started.body.id as string;
    const waiting = await ns.waitForRun(id, (r) => r.status !== 'Running');
    expect(waiting.status).toBe('PendingBudget');
    // Its own usage is one turn; its budget counted the child's two.
    expect(waiting.usage).toMatchObject({ inputTokens: 300, outputTokens: 100 });
    const exceeded = (await ns.events(id)).at(-1)!;
    expect(exceeded.type).toBe('budget-exceeded');
    expect(exceeded.data.spent).toEqual({ tokens: 1200, costUsd: 0 });
    // An extension to what the tree already spent is refused; above it, the parent goes on and answers.
    const small = await ns.request('POST', `/v1/runs/${id}/budget`, { tokens: 1200 });
    expect(small.status).toBe(422);
    expect(small.body.code).toBe('api:runs:budget-too-small');
    const extended = await ns.request('POST', `/v1/runs/${id}/budget`, { tokens: 5000 });
    expect(extended.status, JSON.stringify(extended.body)).toBe(200);
    const run = await ns.waitForEnd(id);
    expect(run.status).toBe('Completed');
    expect(run.result).toMatch(/^Delegated: .*api:runs:ancestor-budget-exceeded/);
  });
});
