import { createFakeOpenAI, type FakeModelRequest, type FakeModelServer, type FakeTurn } from '@maitento/testkit';
import { describe, expect, it } from 'vitest';
import { runsRepoFiles } from './helpers/config-repo.js';
import { startRunsStack, useRunsStack } from './helpers/stack.js';
import { runMt } from './support/harness.js';

// Issue #46, token and cost accounting (and test 4, budgets): a real `mt serve` on PostgreSQL, its agents' model the
// fake OpenAI-compatible server, which reports 300 input and 100 output tokens for every turn (400 a step). The price
// table prices the weather agent's model at 2 USD per million input tokens and 8 per million output tokens, so each
// turn costs 300 × 2 / 1e6 + 100 × 8 / 1e6 = 0.0014 USD.
const STEP = { input: 300, output: 100 };
const STEP_COST = 0.0014;
const PRICES = { 'openai:gpt-4o-mini': { input: 2, output: 8 } };

let model: FakeModelServer;

/** The weather agent calls current-weather `[calls:N]` times (once a turn), then answers. */
function weatherTurns(request: FakeModelRequest): FakeTurn {
  const c = request.conversation;
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
    const stack = await startRunsStack({
      env: { OPENAI_BASE_URL: model.url, MT_MODEL_PRICES: JSON.stringify(PRICES) },
    });
    // The weather interaction again, with a budget of 1,000 tokens (the .mtr language's `budget`).
    const files = runsRepoFiles({ origin: stack.upstream.origin });
    const weather = files.find((f) => f.path === 'interactions/one-shot/weather.mtr')!;
    await stack.api.deploy([
      ...files,
      {
        path: 'interactions/one-shot/weather-budgeted.mtr',
        content: `${weather.content}budget = { tokens = 1000 onExceeded = "wait" }\n`,
      },
    ]);
    return stack;
  },
  { closing: () => model.close() },
);

const close = (a: number, b: number) => expect(a).toBeCloseTo(b, 10);

describe('token and cost accounting', () => {
  it('stores each turn’s tokens and cost, and the run’s totals, shown by REST and the CLI', async () => {
    const started = await stack.api.startRun('weather', { place: 'London [calls:2]' });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    expect(started.body.usage).toEqual({ inputTokens: 0, outputTokens: 0, costUsd: 0 });
    const run = await stack.api.waitForEnd(started.body.id);
    expect(run.status).toBe('Completed');
    // Three turns: two tool calls and the answer.
    expect(run.usage.inputTokens).toBe(900);
    expect(run.usage.outputTokens).toBe(300);
    close(run.usage.costUsd, 3 * STEP_COST);
    const responses = (await stack.api.events(run.id)).filter((e) => e.type === 'model-response');
    expect(responses).toHaveLength(3);
    for (const r of responses) {
      expect(r.data.usage).toEqual({ inputTokens: 300, outputTokens: 100 });
      close(r.data.costUsd as number, STEP_COST);
    }
    // The list shows the same totals.
    const list = await stack.api.request('GET', '/v1/runs?interaction=weather');
    const listed = list.body.runs.find((r: { id: string }) => r.id === run.id);
    expect(listed.usage).toEqual(run.usage);

    const env = { MT_API_URL: stack.servers[0].url, MT_API_KEY: stack.adminKey };
    const status = await runMt(['interaction-status', run.id], { home: stack.home, env });
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain('900 in + 300 out tokens, $0.0042');
    const runs = await runMt(['run-list', '--interaction', 'weather'], { home: stack.home, env });
    expect(runs.code, runs.stderr).toBe(0);
    expect(runs.stdout).toMatch(/TOKENS\s+COST/);
    expect(runs.stdout).toMatch(new RegExp(`${run.id}.*\\b1200\\s+\\$0\\.0042\\b`));
  });

  it('counts tokens at no cost for a model the price table does not name', async () => {
    // weather-claude's model is the stack's fake Anthropic server (11 input and 7 output tokens a turn).
    const started = await stack.api.startRun('weather-claude', { place: 'Paris' });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const run = await stack.api.waitForEnd(started.body.id);
    expect(run.status).toBe('Completed');
    expect(run.usage).toEqual({ inputTokens: 22, outputTokens: 14, costUsd: 0 });
    const responses = (await stack.api.events(run.id)).filter((e) => e.type === 'model-response');
    expect(responses.map((r) => r.data.costUsd)).toEqual([null, null]);
  });
});

describe('budgets', () => {
  const cli = (args: string[]) =>
    runMt(args, { home: stack.home, env: { MT_API_URL: stack.servers[0].url, MT_API_KEY: stack.adminKey } });
  const modelTurns = async (id: string) =>
    (await stack.api.events(id)).filter((e) => e.type === 'model-response').length;

  it('stops a run of 1,000 tokens at 400 a step after the third step; extending it resumes it', async () => {
    const started = await stack.api.startRun('weather-budgeted', { place: 'London [calls:5]' });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    expect(started.body.budget).toEqual({ tokens: 1000, costUsd: null, onExceeded: 'wait' });
    const id = started.body.id;
    const waiting = await stack.api.waitForRun(id, (r) => r.status !== 'Running');
    expect(waiting.status).toBe('PendingBudget');
    // Three turns (400, 800, 1,200 tokens), and no fourth was asked for.
    expect(await modelTurns(id)).toBe(3);
    expect(waiting.usage).toMatchObject({ inputTokens: 900, outputTokens: 300 });
    const events = await stack.api.events(id);
    const exceeded = events.at(-1)!;
    expect(exceeded.type).toBe('budget-exceeded');
    expect(exceeded.data).toEqual({
      spent: { tokens: 1200, costUsd: 3 * STEP_COST },
      budget: { tokens: 1000, costUsd: null, onExceeded: 'wait' },
    });
    // Shown by the CLI with the commands that answer it.
    const status = await cli(['interaction-status', id]);
    expect(status.stdout).toContain('PendingBudget');
    expect(status.stdout).toContain(`mt interaction-budget ${id} --tokens N`);

    // A limit the run already reached is refused, saying what it spent; the run still waits.
    const small = await stack.api.request('POST', `/v1/runs/${id}/budget`, { tokens: 1200 });
    expect(small.status).toBe(422);
    expect(small.body.code).toBe('api:runs:budget-too-small');
    expect(small.body.error).toContain('what the run spent (1200 tokens, $0.0042 USD)');
    expect((await stack.api.getRun(id)).status).toBe('PendingBudget');

    // Extended through the real CLI: the run goes on from where it stopped and completes (three more turns).
    const extended = await cli(['interaction-budget', id, '--tokens', '5000']);
    expect(extended.code, extended.stderr).toBe(0);
    const run = await stack.api.waitForEnd(id);
    expect(run.status).toBe('Completed');
    expect(run.result).toBe('Done after 5 calls');
    expect(run.budget).toEqual({ tokens: 5000, costUsd: null, onExceeded: 'wait' });
    expect(run.usage).toMatchObject({ inputTokens: 1800, outputTokens: 600 });
    expect(await modelTurns(id)).toBe(6);
    const kinds = (await stack.api.events(id)).map((e) => e.type);
    expect(kinds.filter((k) => k === 'budget-extended')).toHaveLength(1);
    // Audited, with the budget before and after.
    const audit = await stack.api.request('GET', `/v1/audit?action=run.budget-extended&target=run:${id}`);
    expect(audit.status, JSON.stringify(audit.body)).toBe(200);
    expect(audit.body.entries).toHaveLength(1);
    expect(audit.body.entries[0].before.budget.tokens).toBe(1000);
    expect(audit.body.entries[0].after.budget.tokens).toBe(5000);
    // A run that does not wait for its budget is refused.
    const ended = await stack.api.request('POST', `/v1/runs/${id}/budget`, { tokens: 9000 });
    expect(ended.status).toBe(409);
    expect(ended.body.code).toBe('api:runs:already-ended');
  });

  it('fails a run whose budget says "fail" with a clear reason, at the start request’s budget', async () => {
    const started = await stack.api.startRun(
      'weather',
      { place: 'London [calls:5]' },
      { budget: { tokens: 1000, onExceeded: 'fail' } },
    );
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const run = await stack.api.waitForEnd(started.body.id);
    expect(run.status).toBe('Failed');
    expect(run.error?.code).toBe('api:runs:budget-exceeded');
    expect(run.error?.message).toBe('The run reached its budget (1000 tokens): it spent 1200 tokens, $0.0042 USD');
    expect(await modelTurns(run.id)).toBe(3);
  });

  it('lets a waiting run fail instead: onExceeded "fail" and no larger limit ends it Failed at once, audited', async () => {
    const started = await stack.api.startRun(
      'weather',
      { place: 'Leeds [calls:5]' },
      { budget: { tokens: 1000, onExceeded: 'wait' } },
    );
    const id = started.body.id;
    expect((await stack.api.waitForRun(id, (r) => r.status !== 'Running')).status).toBe('PendingBudget');
    const declined = await stack.api.request('POST', `/v1/runs/${id}/budget`, { onExceeded: 'fail' });
    expect(declined.status, JSON.stringify(declined.body)).toBe(200);
    expect(declined.body).toMatchObject({
      status: 'Failed',
      budget: { tokens: 1000, costUsd: null, onExceeded: 'fail' },
      error: {
        code: 'api:runs:budget-exceeded',
        message: 'The run reached its budget (1000 tokens): it spent 1200 tokens, $0.0042 USD',
      },
    });
    // No turn after it: the three of before.
    expect(await modelTurns(id)).toBe(3);
    const audit = await stack.api.request('GET', `/v1/audit?action=run.budget-declined&target=run:${id}`);
    expect(audit.body.entries).toMatchObject([
      { before: { budget: { onExceeded: 'wait' } }, after: { status: 'Failed' } },
    ]);
    const again = await stack.api.request('POST', `/v1/runs/${id}/budget`, { onExceeded: 'fail' });
    expect([again.status, again.body.code]).toEqual([409, 'api:runs:already-ended']);
    // The CLI's way: --on-exceeded fail alone.
    const other = await stack.api.startRun(
      'weather',
      { place: 'York [calls:5]' },
      { budget: { tokens: 1000, onExceeded: 'wait' } },
    );
    expect((await stack.api.waitForRun(other.body.id, (r) => r.status !== 'Running')).status).toBe('PendingBudget');
    const cliFail = await cli(['interaction-budget', other.body.id, '--on-exceeded', 'fail']);
    expect(cliFail.code, cliFail.stderr).toBe(0);
    expect(cliFail.stderr).toContain(`let run ${other.body.id} fail (api:runs:budget-exceeded)`);
    expect((await stack.api.getRun(other.body.id)).status).toBe('Failed');
  });

  it('stops at a cost budget too, and refuses a budget given wrong', async () => {
    const started = await stack.api.startRun(
      'weather',
      { place: 'London [calls:5]' },
      // 0.0014 USD a turn: the second turn reaches 0.0028.
      { budget: { costUsd: 0.0025, onExceeded: 'fail' } },
    );
    const run = await stack.api.waitForEnd(started.body.id);
    expect(run.error?.code).toBe('api:runs:budget-exceeded');
    expect(await modelTurns(run.id)).toBe(2);
    for (const budget of [{ tokens: 0 }, { costUsd: -1 }, {}, { tokens: 10, onExceeded: 'later' }]) {
      const refused = await stack.api.startRun('weather', { place: 'Oslo' }, { budget });
      expect(refused.status, JSON.stringify(budget)).toBe(400);
    }
  });
});

describe('usage figures', () => {
  it('GET /v1/usage and mt usage match the runs, their tool calls and the fake models’ tokens exactly', async () => {
    const runs = (await stack.api.request('GET', '/v1/runs?limit=200')).body.runs as {
      id: string;
      interaction: { name: string };
      status: string;
      usage: { inputTokens: number; outputTokens: number; costUsd: number };
    }[];
    expect(runs.every((r) => !['Running', 'PendingBudget'].includes(r.status))).toBe(true);
    const expected = new Map<string, { runs: number; toolCalls: number; inputTokens: number; outputTokens: number }>();
    for (const run of runs) {
      const toolCalls = (await stack.api.events(run.id)).filter((e) => e.type === 'tool-result').length;
      const group = expected.get(run.interaction.name) ?? { runs: 0, toolCalls: 0, inputTokens: 0, outputTokens: 0 };
      group.runs += 1;
      group.toolCalls += toolCalls;
      group.inputTokens += run.usage.inputTokens;
      group.outputTokens += run.usage.outputTokens;
      expected.set(run.interaction.name, group);
    }
    const byInteraction = await stack.api.request('GET', '/v1/usage?by=interaction');
    expect(byInteraction.status, JSON.stringify(byInteraction.body)).toBe(200);
    expect(byInteraction.body.by).toBe('interaction');
    const groups = byInteraction.body.groups as { key: string; runs: number; toolCalls: number; costUsd: number }[];
    expect(new Map(groups.map(({ key, costUsd: _cost, ...figures }) => [key, figures]))).toEqual(expected);
    // Every OpenAI request of the fake model reported 300 + 100 tokens and cost 0.0014 USD; the Anthropic one 11 + 7.
    const total = await stack.api.request('GET', '/v1/usage');
    expect(total.body.groups).toHaveLength(1);
    const [all] = total.body.groups;
    expect(all.key).toBe('default');
    expect(all.runs).toBe(runs.length);
    const anthropicRequests = stack.anthropic.server.requests.length;
    expect(all.inputTokens).toBe(300 * model.requests.length + 11 * anthropicRequests);
    expect(all.outputTokens).toBe(100 * model.requests.length + 7 * anthropicRequests);
    close(all.costUsd, STEP_COST * model.requests.length);
    // By key: every run here was started by the admin key.
    const byKey = await stack.api.request('GET', '/v1/usage?by=key');
    expect(byKey.body.groups).toHaveLength(1);
    expect(byKey.body.groups[0].runs).toBe(runs.length);
    // A period with no run, and a time that is none.
    const future = await stack.api.request('GET', '/v1/usage?since=2999-01-01T00:00:00Z');
    expect(future.body.groups).toEqual([]);
    const wrong = await stack.api.request('GET', '/v1/usage?since=2026-13-45T00:00:00Z');
    expect(wrong.status).toBe(422);
    expect(wrong.body.code).toBe('api:audit:time-invalid');

    const cli = await runMt(['usage', '--by', 'interaction'], {
      home: stack.home,
      env: { MT_API_URL: stack.servers[0].url, MT_API_KEY: stack.adminKey },
    });
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toMatch(/^INTERACTION +RUNS +TOOL CALLS +INPUT TOKENS +OUTPUT TOKENS +COST$/m);
    const weather = expected.get('weather-budgeted')!;
    expect(cli.stdout).toMatch(
      new RegExp(
        `^weather-budgeted +1 +${weather.toolCalls} +${weather.inputTokens} +${weather.outputTokens} +\\$`,
        'm',
      ),
    );
  });
});
