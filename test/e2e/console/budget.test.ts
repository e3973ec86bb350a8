import { createFakeOpenAI, type FakeModelRequest, type FakeModelServer, type FakeTurn } from '@maitento/testkit';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunsStack } from '../helpers/stack.js';
import { expectAccessible, startStackAndBrowser, signedInContext } from './browser.js';
import { setUpWithin } from '../helpers/steps.js';

// A run's cost and budget in the console (decision 0355), on a real `mt serve` with PostgreSQL, its agents' model the
// fake OpenAI-compatible server (300 input and 100 output tokens a turn; priced at 2 and 8 USD per million, so
// 0.0014 USD a turn), driven by Debian's Chromium headless.
const STEP = { input: 300, output: 100 };
const PRICES = { 'openai:gpt-4o-mini': { input: 2, output: 8 } };

/** Holds a `[hold]` run's third turn until the test lets it go (set by the test that needs it). */
let gate: Promise<void> | undefined;

/** The weather agent calls current-weather `[calls:N]` times (once a turn), then answers. */
async function weatherTurns(request: FakeModelRequest): Promise<FakeTurn> {
  const c = request.conversation;
  if (c.userTexts.join('\n').includes('[hold]') && c.toolResults.length === 2) await gate;
  const calls = Number(/\[calls:(\d+)\]/.exec(c.userTexts.join('\n'))?.[1] ?? 1);
  if (c.toolResults.length < calls) {
    const additionalInputs = { 'query.latitude': 51.5, 'query.longitude': -0.13 };
    return { toolCalls: [{ name: 'current-weather', arguments: { additionalInputs } }], usage: STEP };
  }
  return { text: `Done after ${c.toolResults.length} calls`, usage: STEP };
}

let model: FakeModelServer;
let stack: RunsStack;
let browser: Browser;
let admin: BrowserContext;
let base: string;

beforeAll(
  () =>
    setUpWithin(
      120_000,
      async () => {
        model = await createFakeOpenAI({ respond: weatherTurns });
        ({ stack, browser } = await startStackAndBrowser({
          // The stack creates the orders secret and deploys the runs repo.
          env: { OPENAI_BASE_URL: model.url, MT_MODEL_PRICES: JSON.stringify(PRICES) },
        }));
        base = stack.servers[0].url.replace(/\/$/, '');
        admin = await signedInContext(browser, base, stack.adminKey);
      },
      { attempts: 2, undo: closeAll },
    ),
  310_000,
);

// Closes what the set-up made: at the end, and an abandoned set-up attempt's (safe to run twice).
async function closeAll(): Promise<void> {
  await browser?.close();
  await stack?.close();
  await model?.close();
}

afterAll(closeAll);

/** A weather run of `calls` calls with a budget of 1,000 tokens that waits: it stops after its third turn (1,200). */
async function waitingRun(calls: number): Promise<string> {
  const started = await stack.api.startRun(
    'weather',
    { place: `London [calls:${calls}]` },
    { budget: { tokens: 1000, onExceeded: 'wait' } },
  );
  expect(started.status, JSON.stringify(started.body)).toBe(201);
  const waiting = await stack.api.waitForRun(started.body.id, (r) => r.status !== 'Running');
  expect(waiting.status).toBe('PendingBudget');
  return started.body.id;
}

describe('a run’s cost and budget in the console', { timeout: 60_000 }, () => {
  it('shows tokens and cost per step and per run; the budget panel refuses a limit already reached, then extends it and the run resumes', async () => {
    const id = await waitingRun(4);
    const page = await admin.newPage();
    await page.goto(`${base}/console/runs/${id}`);
    // Per run: the totals of its three turns, and the budget with how much of it is spent.
    await expect(page.locator('#run-usage').textContent()).resolves.toBe('1,200 tokens (900 in, 300 out), $0.0042');
    await expect(page.locator('#run-budget-limits').textContent()).resolves.toBe(
      '1,000 tokens (120 % spent); then it waits for a person',
    );
    // Per step: each model turn's bar says its tokens and cost; the budget's wait is a bar of its own.
    const turns = page.locator('#timeline .tl-step.k-model .tl-meta');
    await expect(turns.count()).resolves.toBe(3);
    for (const text of await turns.allTextContents()) expect(text).toContain('300 in / 100 out tokens · $0.0014');
    await expect(page.locator('#timeline .tl-step.k-budget .tl-meta').textContent()).resolves.toContain(
      'spent 1,200 tokens, $0.0042 · waiting',
    );
    await expect(page.locator('#timeline > p.muted').textContent()).resolves.toContain('7 steps');
    await expect(page.locator('#timeline > p.muted').textContent()).resolves.toContain('1,200 tokens, $0.0042');
    // The panel: what was spent against which limit, a new limit suggested.
    await expect(page.locator('#budget h2').textContent()).resolves.toBe('This run reached its budget');
    await expect(page.locator('#budget').textContent()).resolves.toContain(
      'It spent 1,200 tokens, $0.0042 against a budget of 1,000 tokens',
    );
    await expect(page.locator('#budget-tokens').inputValue()).resolves.toBe('2400');
    // A limit the run already reached is refused next to the field, and the run still waits.
    await page.fill('#budget-tokens', '1100');
    await Promise.all([page.waitForLoadState('load'), page.click('#budget-extend button[type=submit]')]);
    await expect(page.locator('#budget-error').textContent()).resolves.toContain('is not above what the run spent');
    await expect(page.locator('#budget-tokens').getAttribute('aria-invalid')).resolves.toBe('true');
    expect((await stack.api.getRun(id)).status).toBe('PendingBudget');
    // Extended: the run goes on from where it stopped and completes (two more turns: the fourth call, the answer).
    await page.fill('#budget-tokens', '5000');
    await Promise.all([
      page.waitForURL(`${base}/console/runs/${id}`),
      page.click('#budget-extend button[type=submit]'),
    ]);
    const done = await stack.api.waitForEnd(id);
    expect(done.status).toBe('Completed');
    expect(done.budget).toEqual({ tokens: 5000, costUsd: null, onExceeded: 'wait' });
    expect(done.usage).toMatchObject({ inputTokens: 1500, outputTokens: 500 });
    await page.reload();
    await expect(page.locator('#budget').count()).resolves.toBe(0);
    await expect(page.locator('#run-usage').textContent()).resolves.toBe('2,000 tokens (1,500 in, 500 out), $0.007');
    await expect(page.locator('#timeline .tl-step.k-budget .tl-meta').textContent()).resolves.toContain(
      'extended by bootstrap',
    );
    await expect(page.locator('#steps').textContent()).resolves.toContain(
      'Budget extended by bootstrap to 5,000 tokens',
    );
    const audit = await stack.api.request('GET', `/v1/audit?action=run.budget-extended&target=run:${id}`);
    expect(audit.body.entries).toHaveLength(1);
    expect(audit.body.entries[0]).toMatchObject({
      actor: { kind: 'key', via: 'console' },
      after: { budget: { tokens: 5000 } },
    });
    await page.close();
  });

  it('the panel and what the run spent appear on an open run page as the run goes on, without a reload; letting it fail ends it Failed', async () => {
    const page = await admin.newPage();
    let release = () => {};
    gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    // The run's third turn (the one that reaches the budget) is held until the page is open on the running run.
    const started = await stack.api.startRun(
      'weather',
      { place: 'Paris [calls:6] [hold]' },
      { budget: { tokens: 1000, onExceeded: 'wait' } },
    );
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    await model.waitForRequest(
      (r) => r.conversation.userTexts.join(' ').includes('Paris') && r.conversation.toolResults.length === 2,
    );
    await page.goto(`${base}/console/runs/${started.body.id}`);
    await expect(page.locator('#run-status').textContent()).resolves.toBe('Running');
    await expect(page.locator('#budget h2').count()).resolves.toBe(0);
    // Two turns spent as the page opened.
    await expect(page.locator('#run-usage').textContent()).resolves.toBe('800 tokens (600 in, 200 out), $0.0028');
    await expect(page.locator('#run-budget-limits').textContent()).resolves.toBe(
      '1,000 tokens (80 % spent); then it waits for a person',
    );
    release();
    // The steps come over SSE, the panel with them (out of band), the status line and what the run spent too.
    await page.locator('#budget h2').waitFor({ timeout: 10_000 });
    await expect(page.locator('#run-status').textContent()).resolves.toBe('PendingBudget');
    await expect(page.locator('#run-usage').textContent()).resolves.toBe('1,200 tokens (900 in, 300 out), $0.0042');
    await expect(page.locator('#run-budget-limits').textContent()).resolves.toBe(
      '1,000 tokens (120 % spent); then it waits for a person',
    );
    await Promise.all([
      page.waitForURL(`${base}/console/runs/${started.body.id}`),
      page.click('#budget-fail button[type=submit]'),
    ]);
    const ended = await stack.api.waitForEnd(started.body.id);
    expect(ended.status).toBe('Failed');
    expect(ended.error).toEqual({
      code: 'api:runs:budget-exceeded',
      message: 'The run reached its budget (1000 tokens): it spent 1200 tokens, $0.0042 USD',
    });
    await expect(page.locator('#run-error').textContent()).resolves.toContain('api:runs:budget-exceeded');
    await expect(page.locator('#budget').count()).resolves.toBe(0);
    const audit = await stack.api.request('GET', `/v1/audit?action=run.budget-declined&target=run:${started.body.id}`);
    expect(audit.body.entries).toMatchObject([{ actor: { via: 'console' }, after: { status: 'Failed' } }]);
    await page.close();
  });

  it.each(['light', 'dark'] as const)(
    'a run waiting for its budget has no axe violation and fits 360 px (%s)',
    async (scheme) => {
      const id = await waitingRun(3);
      const page = await admin.newPage();
      await page.emulateMedia({ colorScheme: scheme });
      await page.goto(`${base}/console/runs/${id}`);
      await page.locator('#budget').waitFor();
      await page.evaluate(() => {
        for (const d of document.querySelectorAll('details')) d.open = true;
      });
      await expectAccessible(page);
      // And it fits a 360 px wide screen without scrolling sideways.
      await page.setViewportSize({ width: 360, height: 780 });
      await expect(page.evaluate(() => document.documentElement.scrollWidth)).resolves.toBe(360);
      await stack.api.request('POST', `/v1/runs/${id}/cancel`, {});
      await page.close();
    },
  );
});
