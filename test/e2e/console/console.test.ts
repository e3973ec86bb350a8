import { randomBytes } from 'node:crypto';
import { startTcpProxy, type TcpProxy } from '@maitento/testkit';
import pg from 'pg';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApprovalView, RunView } from '../helpers/api.js';
import { runsRepoFiles } from '../helpers/config-repo.js';
import type { RunsStack } from '../helpers/stack.js';
import { expectAccessible, screenshot, signIn, startStackAndBrowser } from './browser.js';
import { setUpWithin, step } from '../helpers/steps.js';

// The web console (/console) of a real `mt serve` on PostgreSQL, with the scripted model and a local upstream,
// driven by Debian's Chromium headless. One server and one browser for the whole file; the browser reaches the
// server through a TCP proxy, so a test can drop its connections mid-run.
let stack: RunsStack;
let proxy: TcpProxy;
let browser: Browser;
let base: string;
/** A random value of the orders secret: it must be in no response and no page. */
const SECRET = `sk-console-${randomBytes(12).toString('hex')}`;
/** Every response body the browser received, to look for the secret in. */
const bodies: string[] = [];
let admin: BrowserContext;

async function newContext(): Promise<BrowserContext> {
  const context = await browser.newContext();
  context.on('response', async (response) => {
    const type = response.headers()['content-type'] ?? '';
    if (type.startsWith('text/event-stream')) return;
    try {
      bodies.push(await response.text());
    } catch {
      // a redirect or an aborted response has no body
    }
  });
  return context;
}

beforeAll(
  () =>
    setUpWithin(
      120_000,
      async () => {
        // The browser starts while the server does (each takes seconds); afterAll closes whichever started.
        ({ stack, browser } = await startStackAndBrowser({ deploy: false }));
        const secret = await stack.api.request('POST', '/v1/secrets', { name: 'orders-api-key', value: SECRET });
        expect(secret.status, JSON.stringify(secret.body)).toBe(201);
        await stack.api.deploy(runsRepoFiles({ origin: stack.upstream.origin }));
        const server = new URL(stack.servers[0].url);
        proxy = await startTcpProxy({ host: server.hostname, port: Number(server.port) });
        base = `http://127.0.0.1:${proxy.port}`;
        admin = await step('browser context', () => newContext());
      },
      { attempts: 2, undo: closeAll },
    ),
  310_000,
);

// Closes what the set-up made: at the end, and an abandoned set-up attempt's (safe to run twice).
async function closeAll(): Promise<void> {
  await browser?.close();
  await proxy?.close();
  await stack?.close();
}

afterAll(closeAll);

async function startRun(message: string): Promise<RunView> {
  const started = await stack.api.startRun('support-desk', { message });
  expect(started.status, JSON.stringify(started.body)).toBe(201);
  return started.body;
}

async function pendingOf(id: string, notId?: string): Promise<ApprovalView> {
  const run = await stack.api.waitForRun(
    id,
    (r) => r.status !== 'Running' && !(r.status === 'PendingApproval' && r.pendingApproval?.id === notId),
  );
  expect(run.status, JSON.stringify(run)).toBe('PendingApproval');
  return run.pendingApproval as ApprovalView;
}

const refundCalls = (order: string) => stack.upstream.requests.filter((r) => r.url.endsWith(`/${order}/refund`));

describe('the web console', { timeout: 60_000 }, () => {
  it('1. refuses a wrong key with an alert and no cookie, signs in, signs out, and ends a deleted key’s session', async () => {
    const context = await newContext();
    const page = await context.newPage();
    await page.goto(`${base}/console/login`);
    await page.fill('#key', 'mt_not_a_key');
    const [wrong] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST'),
      page.click('button[type=submit]'),
    ]);
    expect(wrong.status()).toBe(401);
    await expect.poll(() => page.locator('[role=alert]').textContent(), { timeout: 15_000 }).toContain('not valid');
    expect((await context.cookies()).filter((c) => c.name === 'mt_console_session')).toEqual([]);

    await signIn(page, base, stack.adminKey);
    expect(new URL(page.url()).pathname).toBe('/console/approvals');
    expect(await page.locator('h1').textContent()).toBe('Approvals');
    const [cookie] = (await context.cookies()).filter((c) => c.name === 'mt_console_session');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/console' });
    // The row holds a hash of the cookie's token, never the key or the token.
    const client = new pg.Client({ connectionString: stack.db?.url });
    await client.connect();
    const rows = await client.query('SELECT * FROM mt_console_sessions').finally(() => client.end());
    expect(rows.rows.length).toBeGreaterThan(0);
    const stored = JSON.stringify(
      rows.rows.map((r) => ({ ...r, token_hash: Buffer.from(r.token_hash).toString('hex') })),
    );
    expect(stored).not.toContain(stack.adminKey);
    expect(stored).not.toContain(cookie.value);

    // The audit log page (an admin key's) lists the sign-in, by the admin key through the console.
    await page.click('text=Audit log');
    expect(await page.locator('h1').textContent()).toBe('Audit log');
    expect(await page.locator('tbody tr').first().textContent()).toMatch(/\(admin\) via console\s*console\.signed-in/);

    await Promise.all([page.waitForURL(/\/console\/login/), page.click('text=Sign out')]);
    const signedOut = await stack.api.request('GET', '/v1/audit?action=console.signed-out');
    expect(signedOut.body.entries[0]).toMatchObject({
      actor: { kind: 'key', role: 'admin', via: 'console' },
      action: 'console.signed-out',
    });
    // The old cookie no longer opens anything.
    const after = await fetch(`${base}/console/approvals`, {
      headers: { cookie: `mt_console_session=${cookie.value}` },
      redirect: 'manual',
    });
    expect(after.status).toBe(303);
    expect(after.headers.get('location')).toMatch(/^\/console\/login/);

    // A user key signs in; deleting it ends its session at once.
    const made = await stack.api.request<{ id: string; key: string }>('POST', '/v1/keys', {
      name: 'short-lived',
      role: 'user',
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    await signIn(page, base, made.body.key);
    expect(await page.locator('header').textContent()).toContain('short-lived');
    // A user key has no audit log: no link, and the page is refused.
    expect(await page.locator('nav >> text=Audit log').count()).toBe(0);
    expect((await page.goto(`${base}/console/audit`))?.status()).toBe(403);
    // It watches a run that waits on its model, over the live stream.
    const run = await startRun('[gate:key-deleted] What is the status of order A-1101?');
    await stack.openai.reached('key-deleted');
    const isLive = (url: string) => url.includes(`/console/runs/${run.id}/live`);
    const live = page.waitForResponse((r) => isLive(r.url()));
    await page.goto(`${base}/console/runs/${run.id}`);
    expect((await live).status()).toBe(200);
    const ended = page.waitForEvent('requestfinished', { predicate: (r) => isLive(r.url()), timeout: 10_000 });
    const retried = page.waitForResponse((r) => isLive(r.url()) && r.status() !== 200, { timeout: 15_000 });
    const deleted = await stack.api.request('DELETE', `/v1/keys/${made.body.id}`);
    expect(deleted.status, JSON.stringify(deleted.body)).toBeLessThan(300);
    // The open stream ends at once, and its reconnection is refused: the session went with the key.
    await ended;
    expect((await retried).status()).toBe(401);
    stack.openai.open('key-deleted');
    await stack.api.waitForEnd(run.id);
    await page.goto(`${base}/console/approvals`);
    expect(new URL(page.url()).pathname).toBe('/console/login');
    await context.close();
  });

  it('3. shows an approval with its URL, bindings and inputs, never the secret; reject needs a reason; approve completes the run with one call', async () => {
    const page = await step('new page', () => admin.newPage());
    await signIn(page, base, stack.adminKey);
    // The inbox is open before the approval exists: it appears without a reload, within 2 s.
    await page.goto(`${base}/console/approvals`);
    const run = await startRun('The lamp of order A-3001 arrived broken, please refund it.');
    const first = await pendingOf(run.id);
    const pendingAt = Date.now();
    const row = page.locator(`#approval-${first.id}`);
    await row.waitFor({ timeout: 2000 });
    expect(Date.now() - pendingAt).toBeLessThan(2000);
    await screenshot(page, 'console-inbox.png');
    expect(await page.locator('nav').textContent()).toMatch(/Approvals \([1-9]\d* pending\)/);
    await Promise.all([page.waitForURL(new RegExp(first.id)), row.locator('a').first().click()]);
    const main = (await page.locator('main').textContent()) ?? '';
    expect(main).toContain(`${stack.upstream.origin}/orders/A-3001/refund`);
    expect(main).toContain('POST');
    expect(main).toContain('path.orderId');
    expect(main).toContain('A-3001');
    expect(main).toContain('The lamp arrived broken');
    expect(main).toContain('Support');
    expect(main).toContain('•••• (secret orders-api-key)');

    // Reject without a reason: the error is next to the field, nothing is answered.
    const [empty] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST'),
      page.click('#reject'),
    ]);
    expect(empty.status()).toBe(400);
    expect(await page.locator('#reason-error').textContent()).toMatch(/reason/);
    expect(await page.locator('#reason').getAttribute('aria-describedby')).toBe('reason-error');
    expect((await stack.api.getRun(run.id)).pendingApproval?.id).toBe(first.id);

    await page.fill('#reason', 'Refund at most 25: the lamp still works');
    await Promise.all([page.waitForLoadState('load'), page.click('#reject')]);
    const second = await pendingOf(run.id, first.id);
    expect(second.id).not.toBe(first.id);
    await page.goto(`${base}/console/approvals/${second.id}`);
    expect(await page.locator('main').textContent()).toContain('partial refund');
    await Promise.all([page.waitForLoadState('load'), page.click('#approve')]);
    const done = await stack.api.waitForEnd(run.id);
    expect(done.status, JSON.stringify(done)).toBe('Completed');
    expect(refundCalls('A-3001')).toHaveLength(1);
    // Who decided is recorded: the admin key.
    const answered = await stack.api.request<ApprovalView>('GET', `/v1/approvals/${second.id}`);
    expect(answered.body.answeredBy?.keyName).toBe('bootstrap');

    expect(bodies.some((b) => b.includes(SECRET))).toBe(false);
    await page.goto(`${base}/console/runs/${run.id}`);
    expect(await page.content()).not.toContain(SECRET);
    await page.close();
  });

  it('2. shows a run’s steps in order as they happen, and after a dropped connection with no gap and no duplicate', async () => {
    const page = await admin.newPage();
    const run = await startRun('[gate:live] The lamp of order A-2001 arrived broken, please refund it.');
    await stack.openai.reached('live');
    await page.goto(`${base}/console/runs/${run.id}`);
    const rows = page.locator('#steps > li');
    const before = await rows.count();
    stack.openai.open('live');
    // Steps arrive without a reload, up to the approval the run waits on.
    await expect.poll(() => page.locator('#steps').textContent(), { timeout: 15_000 }).toContain('Approval asked');
    expect(await rows.count()).toBeGreaterThan(before);
    expect(await page.locator('#run-status').textContent()).toBe('PendingApproval');

    // The connection drops; the run goes on; the page catches up from its last step.
    proxy.cut();
    const approval = await pendingOf(run.id);
    const approved = await stack.api.request('POST', `/v1/approvals/${approval.id}/approve`, {});
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    await stack.api.waitForEnd(run.id);
    await expect.poll(() => page.locator('#run-status').textContent(), { timeout: 15_000 }).toBe('Completed');
    // An ended run has nothing to cancel: the button goes with the last step.
    await expect.poll(() => page.locator('#run-cancel').count(), { timeout: 15_000 }).toBe(0);
    const events = await stack.api.events(run.id);
    const ids = await rows.evaluateAll((items) => items.map((li) => li.id));
    expect(ids).toEqual(events.map((e) => `step-${e.seq}`));
    await screenshot(page, 'console-run.png');
    await page.close();
  });

  it('4. two tabs approve one call: one wins, the other is told 409 and who answered when', async () => {
    const run = await startRun('The lamp of order A-4001 arrived broken, please refund it.');
    const approval = await pendingOf(run.id);
    const [a, b] = [await admin.newPage(), await admin.newPage()];
    for (const tab of [a, b]) await tab.goto(`${base}/console/approvals/${approval.id}`);
    await Promise.all([a.waitForLoadState('load'), a.click('#approve')]);
    const [lost] = await Promise.all([b.waitForResponse((r) => r.request().method() === 'POST'), b.click('#approve')]);
    expect(lost.status()).toBe(409);
    await b.waitForLoadState('load');
    const alert = (await b.locator('[role=alert]').textContent()) ?? '';
    expect(alert).toContain('already approved by bootstrap');
    expect(alert).toMatch(/\d{4}-\d{2}-\d{2}T/);
    await stack.api.waitForEnd(run.id);
    expect(refundCalls('A-4001')).toHaveLength(1);
    await a.close();
    await b.close();
  });

  it('5. shows two deploys as two versions; disabling one makes a run’s call fail with the API’s error; enabling it again works', async () => {
    await stack.api.deploy(runsRepoFiles({ origin: stack.upstream.origin, forecastPath: '/v2/forecast' }));
    const page = await admin.newPage();
    await page.goto(`${base}/console/resources`);
    const disable = page.getByRole('button', { name: 'Disable open-meteo-forecast version 2' });
    expect(await disable.count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Disable open-meteo-forecast version 1' }).count()).toBe(1);
    await Promise.all([page.waitForLoadState('load'), disable.click()]);
    expect(await page.locator('[role=status]').textContent()).toContain('disabled');
    const off = await stack.api.startRun('weather', { place: 'London' });
    expect(off.status, JSON.stringify(off.body)).toBe(201);
    await stack.api.waitForEnd(off.body.id);
    const offResult = (await stack.api.events(off.body.id)).find((e) => e.type === 'tool-result');
    expect(offResult?.data).toMatchObject({ ok: false });
    expect(String(offResult?.data.code)).toMatch(/disabled/);
    await page.goto(`${base}/console/runs/${off.body.id}`);
    expect(await page.locator('#steps').textContent()).toContain(String(offResult?.data.code));
    // In the timeline the failed call is a bar of its own whose code links to docs/errors.md.
    const link = page.locator('#timeline .k-fail .tl-detail a', { hasText: String(offResult?.data.code) });
    expect(await link.getAttribute('href')).toMatch(/docs\/errors\.md#api/);

    await page.goto(`${base}/console/resources`);
    await Promise.all([
      page.waitForLoadState('load'),
      page.getByRole('button', { name: 'Enable open-meteo-forecast version 2' }).click(),
    ]);
    const on = await stack.api.startRun('weather', { place: 'Paris' });
    await stack.api.waitForEnd(on.body.id);
    const onResult = (await stack.api.events(on.body.id)).find((e) => e.type === 'tool-result');
    expect(onResult?.data).toMatchObject({ ok: true });

    // The runs list filters by agent (the runs that pinned a version of it).
    await page.goto(`${base}/console/runs?agent=weather-assistant`);
    const listed = (await page.locator('main tbody').textContent()) ?? '';
    expect(listed).toContain(off.body.id.slice(0, 8));
    expect(listed).toContain(on.body.id.slice(0, 8));
    expect(listed).not.toContain('support-desk');
    await page.goto(`${base}/console/runs?agent=support-agent&status=Completed`);
    expect(await page.locator('main tbody').textContent()).not.toContain('weather');
    await page.close();
  });

  it('6. answers a whole approval by keyboard only, in a sensible focus order, and moves focus to the next one', async () => {
    const first = await startRun('The lamp of order A-6001 arrived broken, please refund it.');
    const second = await startRun('The lamp of order A-6002 arrived broken, please refund it.');
    const approval = await pendingOf(first.id);
    const next = await pendingOf(second.id);
    const page = await admin.newPage();
    await page.goto(`${base}/console/approvals/${approval.id}`);
    const focused = () =>
      page.evaluate(() => {
        const el = document.activeElement as HTMLElement | null;
        return el ? el.id || el.getAttribute('aria-label') || (el.textContent ?? '').trim().slice(0, 40) : '';
      });
    const order: string[] = [];
    for (let i = 0; i < 40 && !order.includes('approve'); i++) {
      await page.keyboard.press('Tab');
      order.push(await focused());
    }
    expect(order[0]).toBe('Skip to content');
    expect(order.slice(1, 16)).toEqual([
      'Overview',
      expect.stringMatching(/^Approvals/),
      'Runs',
      'Tools',
      'Interactions',
      'Knowledge',
      'Files',
      'Resources',
      'Connections',
      'Schedules',
      'Triggers',
      'Webhooks',
      'Audit log',
      'Usage',
      'Sign out',
    ]);
    expect(order.at(-1)).toBe('approve');
    await page.keyboard.press('Tab');
    expect(await focused()).toBe('reason');
    await page.keyboard.press('Tab');
    expect(await focused()).toBe('reject');
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Shift+Tab');
    expect(await focused()).toBe('approve');
    await Promise.all([page.waitForURL(new RegExp(`/console/approvals/${next.id}`)), page.keyboard.press('Enter')]);
    // The heading carries `autofocus`, which the browser applies at its next rendering update: that can come after
    // the load event, so the test waits for it (with a deadline) rather than reading focus at the load.
    await expect.poll(focused, { timeout: 5_000 }).toBe('approval-heading');
    expect(await page.locator('[role=status]').textContent()).toContain('next pending');
    expect((await stack.api.waitForEnd(first.id)).status).toBe('Completed');
    // Leave nothing pending for the next tests.
    await stack.api.request('POST', `/v1/approvals/${next.id}/approve`, {});
    await stack.api.waitForEnd(second.id);
    await page.close();
  });

  it('9. decides approvals in the inbox without leaving it: j/k move, a approves, r writes a reason, an edit approves', async () => {
    const a = await startRun('The lamp of order A-9001 arrived broken, please refund it.');
    const first = await pendingOf(a.id);
    const b = await startRun('The lamp of order A-9002 arrived broken, please refund it.');
    const second = await pendingOf(b.id);
    const page = await admin.newPage();
    await page.goto(`${base}/console/approvals`);
    const inboxUrl = page.url();
    const focused = () => page.evaluate(() => document.activeElement?.id ?? '');
    // The shortcuts are on the page.
    expect(await page.locator('#shortcuts').textContent()).toMatch(
      /j\s*next.*k\s*previous.*a\s*approve.*r\s*write a reason/s,
    );
    // The card holds all there is to decide: the exact request (secret masked) beside the model's arguments and
    // words, the run's context, how long it has waited and when it expires.
    const card = page.locator(`#approval-${first.id}`);
    const text = (await card.textContent()) ?? '';
    expect(text).toContain(`POST ${stack.upstream.origin}/orders/A-9001/refund`);
    expect(text).toContain('•••• (secret orders-api-key)');
    expect(text).toContain('"amount": 40');
    expect(text).toContain("The agent's reason");
    expect(text).toContain('A-9001 arrived broken');
    expect(text).toMatch(/Waited \d+ s/);
    expect(text).toMatch(/Expires in \d+|Never expires/);

    // j and k move between cards (the oldest first).
    for (let i = 0; i < 10 && (await focused()) !== `approval-${first.id}`; i++) await page.keyboard.press('j');
    expect(await focused()).toBe(`approval-${first.id}`);
    await page.keyboard.press('j');
    expect(await focused()).toBe(`approval-${second.id}`);
    await page.keyboard.press('k');
    expect(await focused()).toBe(`approval-${first.id}`);
    // a approves in place: the card goes, the page stays, focus is on the next card.
    const [approved] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith(`/console/approvals/${first.id}/approve`)),
      page.keyboard.press('a'),
    ]);
    expect(approved.status()).toBe(200);
    await card.waitFor({ state: 'detached', timeout: 5000 });
    expect(page.url()).toBe(inboxUrl);
    expect(await page.locator('#inbox-notice').textContent()).toContain('Approved refund-order');
    await expect.poll(focused, { timeout: 5000 }).toBe(`approval-${second.id}`);
    expect((await stack.api.waitForEnd(a.id)).status).toBe('Completed');
    expect(refundCalls('A-9001')).toHaveLength(1);

    // r writes a reason; Tab, Enter rejects in place.
    await page.keyboard.press('r');
    expect(await focused()).toBe(`reason-${second.id}`);
    await page.keyboard.type('Refund at most 25: the lamp still works');
    await page.keyboard.press('Tab');
    const [rejected] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith(`/console/approvals/${second.id}/reject`)),
      page.keyboard.press('Enter'),
    ]);
    expect(rejected.status()).toBe(200);
    await page.locator(`#approval-${second.id}`).waitFor({ state: 'detached', timeout: 5000 });
    // The run asks again (a partial refund): its card appears without a reload.
    const third = await pendingOf(b.id, second.id);
    const thirdCard = page.locator(`#approval-${third.id}`);
    await thirdCard.waitFor({ timeout: 5000 });
    expect(page.url()).toBe(inboxUrl);
    expect(await thirdCard.textContent()).toContain('partial refund');

    // Reject without a reason: the error is next to the field, in place, and nothing is answered.
    const [empty] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith(`/console/approvals/${third.id}/reject`)),
      thirdCard.getByRole('button', { name: 'Reject' }).click(),
    ]);
    expect(empty.status()).toBe(400);
    const error = page.locator(`#reason-${third.id}-error`);
    expect(await error.textContent()).toMatch(/reason/);
    expect(await page.locator(`#reason-${third.id}`).getAttribute('aria-describedby')).toBe(`reason-${third.id}-error`);
    expect((await stack.api.getRun(b.id)).pendingApproval?.id).toBe(third.id);

    // Edit, then approve, from the card: the edited call is made once.
    await thirdCard.locator('summary').click();
    await page.fill(
      `#arguments-${third.id}`,
      JSON.stringify({
        request: { amount: 3, reason: 'Refund the lamp only' },
        additionalInputs: { 'path.orderId': 'A-9002' },
      }),
    );
    const [edited] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith(`/console/approvals/${third.id}/approve`)),
      thirdCard.getByRole('button', { name: 'Approve with these arguments' }).click(),
    ]);
    expect(edited.status()).toBe(200);
    await thirdCard.waitFor({ state: 'detached', timeout: 5000 });
    expect((await stack.api.waitForEnd(b.id)).status).toBe('Completed');
    expect(refundCalls('A-9002').map((c) => JSON.parse(c.body))).toEqual([
      { amount: 3, reason: 'Refund the lamp only' },
    ]);
    expect(page.url()).toBe(inboxUrl);
    expect(bodies.some((body) => body.includes(SECRET))).toBe(false);
    await page.close();
  });

  it('10. draws a run as a timeline: one bar per step with its events’ durations, live while it runs, a step opens its detail', async () => {
    const run = await startRun('[gate:timeline] The lamp of order A-1001 arrived broken, please refund it.');
    await stack.openai.reached('timeline');
    const page = await admin.newPage();
    await page.goto(`${base}/console/runs/${run.id}`);
    const bars = page.locator('#timeline .tl-step');
    const before = await bars.count();
    stack.openai.open('timeline');
    // Bars arrive without a reload, up to the approval wait.
    await expect
      .poll(() => page.locator('#timeline').textContent(), { timeout: 15_000 })
      .toContain('Approval wait: refund-order');
    expect(await bars.count()).toBeGreaterThan(before);
    const approval = await pendingOf(run.id);
    expect((await stack.api.request('POST', `/v1/approvals/${approval.id}/approve`, {})).status).toBe(200);
    await stack.api.waitForEnd(run.id);
    // Once the run has ended the timeline stops asking for itself.
    await expect.poll(() => page.locator('#timeline').getAttribute('hx-get'), { timeout: 15_000 }).toBeNull();
    const events = await stack.api.events(run.id);
    const stepped = events.filter((e) =>
      ['model-response', 'tool-result', 'approval-requested', 'input-requested'].includes(e.type),
    );
    expect(await bars.count()).toBe(stepped.length);
    // Each bar says the duration its event states.
    const shown = await page.locator('#timeline .tl-duration').allTextContents();
    const stated = stepped.map((e) => (typeof e.data.durationMs === 'number' ? e.data.durationMs : null));
    shown.forEach((text, i) => {
      const ms = stated[i];
      if (ms !== null && ms < 1000) expect(text).toBe(`${ms} ms`);
      if (ms !== null && ms >= 1000) expect(text).toBe(`${(ms / 1000).toFixed(1)} s`);
    });
    // A bar's place and length are classes (the CSP allows no style attribute).
    for (const cls of await page.locator('#timeline .tl-bar').evaluateAll((els) => els.map((e) => e.className)))
      expect(cls).toMatch(/^tl-bar o-\d+ w-\d+$/);
    expect(await page.locator('#timeline [style]').count()).toBe(0);
    // A tool call opens to its arguments, the prepared request (masked) and the response.
    const refund = page.locator('#timeline .tl-step', { hasText: 'Tool call refund-order' });
    await refund.locator('summary').click();
    const detail = (await refund.locator('.tl-detail').textContent()) ?? '';
    expect(detail).toContain('Arguments');
    expect(detail).toContain('The prepared request (secrets masked)');
    expect(detail).toContain('/orders/A-1001/refund');
    expect(detail).toContain('Response');
    expect(detail).not.toContain(SECRET);
    // The model's words, with its tokens.
    expect(await page.locator('#timeline .tl-step.k-model').first().textContent()).toMatch(/tokens/);
    // The pictures show the ended run as loaded afresh (the page's "Spent" line is not live; the timeline is).
    if (process.env.MT_CONSOLE_SCREENSHOTS) {
      await page.reload();
      await refund.locator('summary').click();
      await screenshot(page, 'console-timeline.png');
    }
    await page.close();
  });

  it('11. tells of a new approval by a browser notification once asked to, on a click', async () => {
    const context = await newContext();
    // A stand-in for the browser's Notification API that records what is shown (headless Chromium shows nothing).
    await context.addInitScript(() => {
      const shown: string[] = [];
      let permission = 'default';
      Object.assign(window, { __shown: shown });
      Object.defineProperty(window, 'Notification', {
        value: class {
          static get permission() {
            return permission;
          }
          static async requestPermission() {
            permission = 'granted';
            return permission;
          }
          constructor(title: string) {
            shown.push(title);
          }
        },
      });
    });
    const page = await context.newPage();
    await context.addCookies(await admin.cookies());
    await page.goto(`${base}/console/approvals`);
    const notify = page.locator('#notify');
    expect(await notify.isVisible()).toBe(true);
    expect(await page.evaluate(() => (window as unknown as { __shown: string[] }).__shown)).toEqual([]);
    await notify.click();
    await expect.poll(() => notify.getAttribute('aria-pressed')).toBe('true');
    const run = await startRun('The lamp of order A-1101 arrived broken, please refund it.');
    const approval = await pendingOf(run.id);
    await page.locator(`#approval-${approval.id}`).waitFor({ timeout: 5000 });
    await expect
      .poll(() => page.evaluate(() => (window as unknown as { __shown: string[] }).__shown))
      .toEqual(['Approve refund-order?']);
    await stack.api.request('POST', `/v1/approvals/${approval.id}/approve`, {});
    await stack.api.waitForEnd(run.id);
    await context.close();
  });

  // One test a page: axe-core's analysis of a page took 7-10 s of Chromium's CPU at load 19, so the six pages in one
  // test took 53 s of its 60 s (and ran out at load 20+).
  describe('7. every page has no WCAG 2.2 AA violation (axe-core)', () => {
    let run: RunView;
    let approval: ApprovalView;

    beforeAll(async () => {
      run = await startRun('The lamp of order A-7001 arrived broken, please refund it.');
      approval = await pendingOf(run.id);
    });

    afterAll(async () => {
      if (run) await stack.api.request('POST', `/v1/runs/${run.id}/cancel`, {});
    });

    const pages: [string, () => string][] = [
      ['the approvals', () => '/console/approvals'],
      ['an approval', () => `/console/approvals/${approval.id}`],
      ['the runs', () => '/console/runs'],
      ['a run', () => `/console/runs/${run.id}`],
      ['the resources', () => '/console/resources'],
      ['the audit log', () => '/console/audit'],
    ];

    it.each(['light', 'dark'] as const)('the sign-in page (%s)', async (scheme) => {
      const anonymous = await newContext();
      const login = await anonymous.newPage();
      await login.emulateMedia({ colorScheme: scheme });
      await login.goto(`${base}/console/login`);
      await expectAccessible(login);
      await anonymous.close();
    });

    it.each(pages.flatMap(([name]) => (['light', 'dark'] as const).map((scheme) => [name, scheme] as const)))(
      '%s page (%s)',
      async (name, scheme) => {
        const path = pages.find(([n]) => n === name)?.[1] ?? (() => '/console');
        const page = await admin.newPage();
        await page.emulateMedia({ colorScheme: scheme });
        await page.goto(`${base}${path()}`);
        // Opened steps and edits are checked too (highlighted JSON, the bars, the error links).
        await page.evaluate(() => {
          for (const d of document.querySelectorAll('details')) d.open = true;
        });
        await expectAccessible(page);
        await page.close();
      },
    );

    it('every page fits a 360 px wide screen without scrolling sideways', async () => {
      const context = await browser.newContext({ viewport: { width: 360, height: 780 } });
      const page = await context.newPage();
      await signIn(page, base, stack.adminKey);
      const widths: Record<string, number> = {};
      for (const [name, path] of [['the sign-in', () => '/console/login'] as [string, () => string], ...pages]) {
        await page.goto(`${base}${path()}`);
        await page.evaluate(() => {
          for (const d of document.querySelectorAll('details')) d.open = true;
        });
        widths[name] = await page.evaluate(() => document.documentElement.scrollWidth);
      }
      expect(widths).toEqual(Object.fromEntries(Object.keys(widths).map((k) => [k, 360])));
      await context.close();
    });
  });

  it('8. refuses a POST without the CSRF token or from another origin (403), and shows HTML and htmx attributes in a run input as text', async () => {
    const [session] = (await admin.cookies()).filter((c) => c.name === 'mt_console_session');
    const post = (headers: Record<string, string>, body: string) =>
      fetch(`${base}/console/logout`, {
        method: 'POST',
        headers: {
          cookie: `mt_console_session=${session.value}`,
          'content-type': 'application/x-www-form-urlencoded',
          ...headers,
        },
        body,
        redirect: 'manual',
      });
    const noToken = await post({ origin: base }, '');
    expect(noToken.status).toBe(403);
    expect(await noToken.text()).toContain('api:console:csrf-invalid');
    const page = await admin.newPage();
    await page.goto(`${base}/console/approvals`);
    const token = await page.locator('input[name=_csrf]').first().getAttribute('value');
    const foreign = await post({ origin: 'http://evil.example' }, `_csrf=${token}`);
    expect(foreign.status).toBe(403);
    expect(await foreign.text()).toContain('api:console:origin-refused');

    const hostile =
      '<img src=x onerror="window.__owned=1"><button hx-get="/console/resources" hx-trigger="load">x</button>';
    const run = await stack.api.startRun('open-ticket', { message: hostile });
    expect(run.status, JSON.stringify(run.body)).toBe(201);
    await stack.api.waitForEnd(run.body.id);
    await page.goto(`${base}/console/runs/${run.body.id}`);
    expect(await page.locator('main img').count()).toBe(0);
    expect(await page.locator('main [hx-get]').count()).toBe(0);
    expect(await page.locator('.input-value').first().textContent()).toBe(hostile);
    expect(await page.evaluate(() => (window as unknown as { __owned?: number }).__owned)).toBeUndefined();
    await page.close();
  });

  it('1b. answers 429 after 5 sign-in tries a minute from one address', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 7 && !statuses.includes(429); i++) {
      const form = await fetch(`${base}/console/login`);
      const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())?.[1] ?? '';
      const cookie = (form.headers.get('set-cookie') ?? '').split(';')[0];
      const tried = await fetch(`${base}/console/login`, {
        method: 'POST',
        headers: { cookie, origin: base, 'content-type': 'application/x-www-form-urlencoded' },
        body: `_csrf=${encodeURIComponent(csrf)}&key=mt_wrong`,
        redirect: 'manual',
      });
      statuses.push(tried.status);
      if (tried.status === 429) expect(await tried.text()).toContain('role="alert"');
    }
    // Earlier tests signed in too (they count): at most 5 tries pass, the next is refused.
    expect(statuses.at(-1)).toBe(429);
    expect(statuses.slice(0, -1).every((s) => s === 401)).toBe(true);
  });
});
