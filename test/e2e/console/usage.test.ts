import { createFakeOpenAI, type FakeModelRequest, type FakeModelServer, type FakeTurn } from '@maitento/testkit';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Api, api } from '../helpers/api.js';
import type { RunsStack } from '../helpers/stack.js';
import { expectAccessible, signIn, startStackAndBrowser, signedInContext } from './browser.js';
import { setUpWithin } from '../helpers/steps.js';

// The console's usage page (decision 0395) on a real `mt serve` with PostgreSQL, the agents' model the fake
// OpenAI-compatible server (300 input and 100 output tokens a turn, priced at 2 and 8 USD per million) and the tools'
// upstream a local HTTP server, driven by Debian's Chromium headless: its figures are GET /v1/usage's.
const STEP = { input: 300, output: 100 };
const PRICES = { 'openai:gpt-4o-mini': { input: 2, output: 8 } };
const QUOTAS = { runsPerDay: 40, toolCallsPerDay: 9, tokensPerMonth: 1_000_000 };

/** The weather agent calls current-weather `[calls:N]` times (once a turn), then answers; the ticket agent answers. */
async function turns(request: FakeModelRequest): Promise<FakeTurn> {
  const c = request.conversation;
  if (!c.tools.some((t) => t.name === 'current-weather')) return { text: 'Ticket 42 is open', usage: STEP };
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
let userKey: { id: string; key: string };
let userApi: Api;

async function ran(client: Api, interaction: string, inputs: Record<string, unknown>): Promise<void> {
  const started = await client.startRun(interaction, inputs);
  expect(started.status, JSON.stringify(started.body)).toBe(201);
  const done = await stack.api.waitForEnd(started.body.id);
  expect(done.status).toBe('Completed');
}

// The page's default figures are today's (UTC): runs made just before midnight would be yesterday's by the time the
// tests read the page. Within 5 minutes of midnight UTC the set-up waits for it to pass (the file takes about a minute).
const NEAR_MIDNIGHT_MS = 300_000;
async function pastMidnightIfNear(): Promise<void> {
  const toMidnight = 86_400_000 - (Date.now() % 86_400_000);
  if (toMidnight < NEAR_MIDNIGHT_MS) await new Promise((resolve) => setTimeout(resolve, toMidnight + 1_000));
}

beforeAll(async () => {
  await pastMidnightIfNear();
  await setUpWithin(
    180_000,
    async () => {
      model = await createFakeOpenAI({ respond: turns });
      ({ stack, browser } = await startStackAndBrowser({
        // The stack creates the orders secret and deploys the runs repo.
        env: { OPENAI_BASE_URL: model.url, MT_MODEL_PRICES: JSON.stringify(PRICES) },
      }));
      base = stack.servers[0].url.replace(/\/$/, '');
      // The operator (the default namespace's admin) sets the quotas.
      const set = await stack.api.request('PUT', '/v1/namespaces/default/quotas', QUOTAS);
      expect(set.status, JSON.stringify(set.body)).toBe(200);
      const made = await stack.api.request('POST', '/v1/keys', { name: 'usage-app', role: 'user' });
      expect(made.status, JSON.stringify(made.body)).toBe(201);
      userKey = made.body;
      userApi = api(stack.api.url, userKey.key);
      // A few runs: by the admin key, weather with 2 and 1 calls and a ticket; by the user key, weather with 3 calls.
      await ran(stack.api, 'weather', { place: 'London [calls:2]' });
      await ran(stack.api, 'weather', { place: 'Paris [calls:1]' });
      await ran(stack.api, 'open-ticket', { message: 'My parcel is late' });
      await ran(userApi, 'weather', { place: 'Rome [calls:3]' });
      admin = await signedInContext(browser, base, stack.adminKey);
    },
    { attempts: 2, undo: closeAll },
  );
}, 430_000 + NEAR_MIDNIGHT_MS);

// Closes what the set-up made: at the end, and an abandoned set-up attempt's (safe to run twice).
async function closeAll(): Promise<void> {
  await browser?.close();
  await stack?.close();
  await model?.close();
}

afterAll(closeAll);

interface Group {
  key: string | null;
  runs: number;
  toolCalls: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

/** A table of the page as GET /v1/usage's groups: each row's key and its cells' exact values. */
async function tableGroups(page: Page, by: string): Promise<Partial<Group>[]> {
  return page.locator(`#usage-${by} tbody tr`).evaluateAll((rows) =>
    rows.map((row) => {
      const out: Record<string, unknown> = { key: (row as HTMLElement).dataset.key || null };
      for (const cell of row.querySelectorAll<HTMLElement>('td[data-field]')) {
        out[cell.dataset.field as string] = Number(cell.dataset.value);
      }
      return out;
    }),
  );
}

async function apiGroups(since: string, until: string, by: string): Promise<Group[]> {
  const q = new URLSearchParams({ since, until, by });
  const r = await stack.api.request('GET', `/v1/usage?${q}`);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.groups;
}

/** The page's figures equal GET /v1/usage's for the period it shows, in every grouping. */
async function expectSameFigures(page: Page): Promise<{ since: string; until: string }> {
  const heading = page.locator('#usage-period');
  const since = (await heading.getAttribute('data-since')) as string;
  const until = (await heading.getAttribute('data-until')) as string;
  for (const by of ['interaction', 'key'] as const) {
    await expect(tableGroups(page, by)).resolves.toEqual(await apiGroups(since, until, by));
  }
  const tools = (await apiGroups(since, until, 'tool')).map(({ key, runs, toolCalls }) => ({ key, runs, toolCalls }));
  await expect(tableGroups(page, 'tool')).resolves.toEqual(tools);
  const [total] = await apiGroups(since, until, 'namespace');
  await expect(page.locator('#usage-total').getAttribute('data-runs')).resolves.toBe(String(total.runs));
  await expect(page.locator('#usage-total').getAttribute('data-tool-calls')).resolves.toBe(String(total.toolCalls));
  return { since, until };
}

describe('the console’s usage page', { timeout: 60_000 }, () => {
  it('shows today’s figures by interaction, tool and key, equal to GET /v1/usage’s, and the quotas with what is used', async () => {
    const page = await admin.newPage();
    await page.goto(`${base}/console/usage`);
    const { since, until } = await expectSameFigures(page);
    const today = new Date().toISOString().slice(0, 10);
    expect(since).toBe(`${today}T00:00:00.000Z`);
    expect(Date.parse(until) - Date.parse(since)).toBe(24 * 60 * 60 * 1000);
    // What the runs made: 4 runs, 6 calls of current-weather; 10 model turns of 300 in and 100 out ($0.0014 each).
    await expect(page.locator('#usage-total').textContent()).resolves.toBe(
      '4 runs, 6 tool calls, 3,000 tokens in and 1,000 out, $0.01.',
    );
    const weather = page.locator('#usage-interaction tbody tr[data-key="weather"]');
    await expect(weather.locator('td').allTextContents()).resolves.toEqual(['3', '6', '2,700', '900', '$0.01']);
    await expect(page.locator('#usage-tool tbody tr').allTextContents()).resolves.toEqual(['current-weather36']);
    const byUser = page.locator(`#usage-key tbody tr[data-key="${userKey.id}"]`);
    await expect(byUser.locator('th').textContent()).resolves.toBe(`usage-app ${userKey.id.slice(0, 8)}`);
    await expect(byUser.locator('td').allTextContents()).resolves.toEqual(['1', '3', '1,200', '400', '$0.0056']);
    // An interaction's runs link to the runs list filtered to them and to the period (UTC minutes).
    const link = weather.locator('td[data-field=runs] a');
    await expect(link.getAttribute('href')).resolves.toBe(
      `/console/runs?interaction=weather&since=${since.slice(0, 16).replace(':', '%3A')}&until=${until.slice(0, 16).replace(':', '%3A')}`,
    );
    await Promise.all([page.waitForURL(/\/console\/runs\?interaction=weather/), link.click()]);
    await expect(page.locator('#runs-results tbody tr').count()).resolves.toBe(3);
    await page.goBack();
    // The quotas the operator set, each with how much of it is used as text beside its bar.
    const quotas = await stack.api.request('GET', '/v1/quotas');
    expect(quotas.body.quotas).toEqual(QUOTAS);
    await expect(page.locator('#quota-runs').getAttribute('data-quota')).resolves.toBe('40');
    await expect(page.locator('#quota-runs .bar-text').textContent()).resolves.toBe(
      `${quotas.body.used.runsToday} of 40 runs (10 %)`,
    );
    await expect(page.locator('#quota-tool-calls .bar-text').textContent()).resolves.toBe('6 of 9 tool calls (66 %)');
    await expect(page.locator('#quota-tokens .bar-text').textContent()).resolves.toBe(
      `${quotas.body.used.tokensThisMonth.toLocaleString('en')} of 1,000,000 tokens (0 %)`,
    );
    // The bar's length is the share used; the bar is hidden from assistive technologies (the text says it).
    await expect(page.locator('#quota-tool-calls svg rect.c-value').getAttribute('width')).resolves.toBe(
      String((6 / 9) * 100),
    );
    await expect(page.locator('#quota-tool-calls svg').getAttribute('aria-hidden')).resolves.toBe('true');
    await page.close();
  });

  it('keeps the chosen period in the URL: this month and a range of days survive a reload', async () => {
    const page = await admin.newPage();
    await page.goto(`${base}/console/usage`);
    await page.check('input[name=period][value=month]');
    await Promise.all([page.waitForURL(/period=month/), page.click('form.usage-filter button[type=submit]')]);
    await page.reload();
    await expect(page.locator('input[name=period][value=month]').isChecked()).resolves.toBe(true);
    const month = await expectSameFigures(page);
    const now = new Date();
    expect(month.since).toBe(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString());
    // A range of days (the last included): from yesterday to today, then a range before the runs (no run).
    const today = now.toISOString().slice(0, 10);
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    await page.check('input[name=period][value=range]');
    await page.fill('#from', yesterday);
    await page.fill('#to', today);
    await Promise.all([page.waitForURL(/period=range/), page.click('form.usage-filter button[type=submit]')]);
    await page.reload();
    await expect(page.locator('#from').inputValue()).resolves.toBe(yesterday);
    await expect(page.locator('#to').inputValue()).resolves.toBe(today);
    const range = await expectSameFigures(page);
    expect(range).toEqual({
      since: `${yesterday}T00:00:00.000Z`,
      until: new Date(Date.parse(`${today}T00:00:00Z`) + 86_400_000).toISOString(),
    });
    await expect(page.locator('#usage-total').getAttribute('data-runs')).resolves.toBe('4');
    await page.goto(`${base}/console/usage?period=range&from=2020-01-01&to=2020-01-31`);
    await expect(page.locator('#usage-total').getAttribute('data-runs')).resolves.toBe('0');
    await expect(page.locator('#usage-period').textContent()).resolves.toBe('From 2020-01-01 to 2020-01-31');
    // A range with its days the wrong way round is refused next to the fields.
    const refused = await page.goto(`${base}/console/usage?period=range&from=2020-02-01&to=2020-01-31`);
    expect(refused?.status()).toBe(422);
    await expect(page.locator('#usage-error').textContent()).resolves.toBe(
      'The last day of the range is before its first.',
    );
    await expect(page.locator('#from').getAttribute('aria-invalid')).resolves.toBe('true');
    await page.close();
  });

  it('is linked from the navigation and the overview, and reached and filtered by keyboard only', async () => {
    const page = await admin.newPage();
    await page.goto(`${base}/console/overview`);
    await expect(page.locator('nav a[href="/console/usage"]').textContent()).resolves.toBe('Usage');
    await Promise.all([page.waitForURL(`${base}/console/usage`), page.click('#ov-usage-link')]);
    await expect(page.locator('nav a[aria-current=page]').textContent()).resolves.toBe('Usage');
    // By keyboard: on the period's choices, the down arrow chooses "This month"; Tab goes on through the days to the
    // button, and Enter shows the month.
    await page.locator('input[name=period][value=today]').focus();
    await page.keyboard.press('ArrowDown');
    await expect(page.locator('input[name=period][value=month]').isChecked()).resolves.toBe(true);
    // A date field takes a Tab per part (month, day, year): the order is the fields', each counted once.
    const order: string[] = [];
    for (let i = 0; i < 12 && order.at(-1) !== 'BUTTON'; i++) {
      await page.keyboard.press('Tab');
      const at = await page.evaluate(
        () => (document.activeElement as HTMLElement).id || document.activeElement?.tagName || '',
      );
      if (order.at(-1) !== at) order.push(at);
    }
    expect(order).toEqual(['from', 'to', 'BUTTON']);
    await Promise.all([page.waitForURL(/period=month/), page.keyboard.press('Enter')]);
    // From the top of the page, Tab reaches the navigation's link to the page.
    await page.goto(`${base}/console/overview`);
    let reached = false;
    for (let i = 0; i < 30 && !reached; i++) {
      await page.keyboard.press('Tab');
      reached = await page.evaluate(() => document.activeElement?.getAttribute('href') === '/console/usage');
    }
    expect(reached).toBe(true);
    await Promise.all([page.waitForURL(`${base}/console/usage`), page.keyboard.press('Enter')]);
    await page.close();
  });

  it('is an admin’s, as GET /v1/usage is: a user key is refused both and sees no link', async () => {
    const r = await userApi.request('GET', '/v1/usage');
    expect(r.status).toBe(403);
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page, base, userKey.key);
    await page.goto(`${base}/console/overview`);
    await expect(page.locator('a[href="/console/usage"]').count()).resolves.toBe(0);
    const refused = await page.goto(`${base}/console/usage`);
    expect(refused?.status()).toBe(403);
    await expect(page.content()).resolves.toContain('api:auth:forbidden');
    await context.close();
  });

  it.each(['light', 'dark'] as const)('has no axe violation and fits 360 px (%s)', async (scheme) => {
    const page = await admin.newPage();
    await page.emulateMedia({ colorScheme: scheme });
    await page.goto(`${base}/console/usage?period=month`);
    await expectAccessible(page);
    await page.goto(`${base}/console/usage?period=range&from=2020-02-01&to=2020-01-31`);
    await expectAccessible(page);
    await page.goto(`${base}/console/usage`);
    await expectAccessible(page);
    await page.setViewportSize({ width: 360, height: 780 });
    await expect(page.evaluate(() => document.documentElement.scrollWidth)).resolves.toBe(360);
    await page.close();
  });
});
