import { randomBytes } from 'node:crypto';
import { Maitento } from '@maitento/sdk';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunView } from '../helpers/api.js';
import { rm } from 'node:fs/promises';
import { runsRepoFiles, writeRepo } from '../helpers/config-repo.js';
import type { RunsStack } from '../helpers/stack.js';
import { runMt } from '../support/harness.js';
import { expectAccessible, screenshot, signIn, startStackAndBrowser } from './browser.js';
import { setUpWithin, step } from '../helpers/steps.js';

// The console's overview, the runs list's filters and a tool's dry run (decision 0330), on a real `mt serve` with
// PostgreSQL, the scripted model and a recording upstream, driven by Debian's Chromium headless.
let stack: RunsStack;
let browser: Browser;
let admin: BrowserContext;
let base: string;
const SECRET = `sk-explore-${randomBytes(12).toString('hex')}`;
const bodies: string[] = [];
let waiting: RunView;
let completed: RunView;
let failed: RunView;

beforeAll(
  () =>
    setUpWithin(
      120_000,
      async () => {
        ({ stack, browser } = await startStackAndBrowser({ deploy: false }));
        const secret = await stack.api.request('POST', '/v1/secrets', { name: 'orders-api-key', value: SECRET });
        expect(secret.status, JSON.stringify(secret.body)).toBe(201);
        await stack.api.deploy(runsRepoFiles({ origin: stack.upstream.origin }));
        base = stack.servers[0].url.replace(/\/$/, '');
        admin = await step('browser context', () => browser.newContext());
        admin.on('response', async (response) => {
          try {
            bodies.push(await response.text());
          } catch {
            // a redirect has no body
          }
        });
        const start = async (interaction: string, message: string) => {
          const run = await stack.api.startRun(interaction, { message });
          expect(run.status, JSON.stringify(run.body)).toBe(201);
          return run.body as RunView;
        };
        waiting = await start('support-desk', 'The lamp of order A-7101 arrived broken, please refund it.');
        completed = await start('open-ticket', 'My lamp is broken.');
        failed = await start('support-desk', '[fail:garbage] Where is order A-7102?');
        waiting = await stack.api.waitForRun(waiting.id, (r) => r.status === 'PendingApproval');
        completed = await stack.api.waitForEnd(completed.id);
        failed = await stack.api.waitForEnd(failed.id);
        expect(completed.status).toBe('Completed');
        expect(failed.status, JSON.stringify(failed)).toBe('Failed');
        const page = await step('new page', () => admin.newPage());
        await signIn(page, base, stack.adminKey);
        await page.close();
      },
      { attempts: 2, undo: closeAll },
    ),
  310_000,
);

// Closes what the set-up made: at the end, and an abandoned set-up attempt's (safe to run twice).
async function closeAll(): Promise<void> {
  if (waiting) await stack?.api.request('POST', `/v1/runs/${waiting.id}/cancel`, {});
  await browser?.close();
  await stack?.close();
}

afterAll(closeAll);

const rowIds = (page: Page) =>
  page.locator('#runs-results tbody tr td:first-child a').evaluateAll((as) => as.map((a) => a.getAttribute('href')));

describe('the console: overview, filters, dry run', { timeout: 60_000 }, () => {
  it('the overview counts runs by status, the waits, the failures by code, the approvals and the deploys, each a link to its runs', async () => {
    const page = await admin.newPage();
    await page.goto(`${base}/console/overview`);
    expect(await page.locator('h1').textContent()).toBe('Overview');
    // The 24 h chart's legend: each status's count, a link to those runs.
    const statusRow = (status: string) => page.locator('#ch-24h-caption ~ .chart-legend li', { hasText: status });
    expect(await statusRow('Completed').locator('a').textContent()).toMatch(/^[1-9]\d*$/);
    expect(await statusRow('Failed').locator('a').textContent()).toBe('1');
    expect(await statusRow('PendingApproval').locator('a').textContent()).toBe('1');
    // The waiting run is the oldest wait, linked.
    const wait = page.locator('#ov-waiting + table tr', { hasText: 'PendingApproval' });
    expect(await wait.locator(`a[href="/console/runs/${waiting.id}"]`).count()).toBe(1);
    // The failure's code, linked to the failed runs of that code in the window.
    const code = String(failed.error?.code);
    const failure = page.locator('#ov-failed + table tr', { hasText: code });
    expect(await failure.locator('td').nth(1).textContent()).toBe('1');
    expect(await page.locator('#ov-approvals + p a').textContent()).toBe('1 pending approval');
    expect(await page.locator('#ov-deploys + ul li').first().textContent()).toContain('tool get-order v1 (create)');
    await Promise.all([page.waitForURL(/\/console\/runs\?/), failure.locator('a').click()]);
    const url = new URL(page.url());
    expect(url.searchParams.get('status')).toBe('Failed');
    expect(url.searchParams.get('code')).toBe(code);
    expect(url.searchParams.get('since')).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/);
    expect(await rowIds(page)).toEqual([`/console/runs/${failed.id}`]);
    // The Completed count's link lists exactly the completed runs of the window.
    await page.goto(`${base}/console/overview`);
    await Promise.all([page.waitForURL(/status=Completed/), statusRow('Completed').locator('a').click()]);
    const listed = await rowIds(page);
    expect(listed).toContain(`/console/runs/${completed.id}`);
    expect(listed).not.toContain(`/console/runs/${failed.id}`);
    await page.close();
  });

  it('filters the runs in place (htmx), with the filters in the URL, and keeps them on a reload', async () => {
    const page = await admin.newPage();
    const opened = await page.goto(`${base}/console/runs`);
    expect(opened?.status(), await page.content()).toBe(200);
    const loads: string[] = [];
    page.on('load', () => loads.push(page.url()));
    await page.fill('#q', completed.id.slice(9, 18));
    await page.waitForURL((u) => u.searchParams.get('q') === completed.id.slice(9, 18));
    await expect.poll(() => rowIds(page)).toEqual([`/console/runs/${completed.id}`]);
    // In place: the page was not loaded again.
    expect(loads).toEqual([]);
    await page.reload();
    expect(await page.inputValue('#q')).toBe(completed.id.slice(9, 18));
    expect(await rowIds(page)).toEqual([`/console/runs/${completed.id}`]);
    // Status by its select; interaction by name; a time window before any run matches none.
    await page.goto(`${base}/console/runs`);
    await page.selectOption('#status', 'Failed');
    await page.waitForURL((u) => u.searchParams.get('status') === 'Failed');
    await expect.poll(() => rowIds(page)).toEqual([`/console/runs/${failed.id}`]);
    await page.goto(`${base}/console/runs?interaction=open-ticket&agent=ticket-agent`);
    expect(await rowIds(page)).toEqual([`/console/runs/${completed.id}`]);
    await page.goto(`${base}/console/runs?until=2000-01-01T00:00`);
    expect(await page.locator('#runs-results').textContent()).toContain('No run matches.');
    expect(await page.inputValue('#until')).toBe('2000-01-01T00:00');
    await page.goto(`${base}/console/runs?since=2000-01-01T00:00&status=PendingApproval`);
    expect(await rowIds(page)).toEqual([`/console/runs/${waiting.id}`]);
    await page.close();
  });

  it('a dry run shows the prepared request with the secret masked and sends nothing', async () => {
    const page = await admin.newPage();
    await page.goto(`${base}/console/tools`);
    await Promise.all([page.waitForURL(/\/console\/tools\/get-order$/), page.click('a:text-is("get-order")')]);
    const before = stack.upstream.requests.length;
    await page.fill('#arguments', JSON.stringify({ additionalInputs: { 'path.orderId': 'D-9001' } }));
    await page.click('button:text("Prepare, do not send")');
    const result = page.locator('#dry-run-result');
    await expect
      .poll(() => result.locator('.request-line').textContent())
      .toBe(`GET ${stack.upstream.origin}/orders/D-9001`);
    expect(await result.locator('tr', { hasText: 'x-api-key' }).locator('td').textContent()).toBe(
      '•••• (secret orders-api-key)',
    );
    // A tool that needs approval is prepared too (its body shown), and still nothing is sent.
    await page.goto(`${base}/console/tools/refund-order`);
    await page.fill(
      '#arguments',
      JSON.stringify({ request: { amount: 3, reason: 'dry' }, additionalInputs: { 'path.orderId': 'D-9002' } }),
    );
    await page.click('button:text("Prepare, do not send")');
    await expect
      .poll(() => result.locator('.request-line').textContent())
      .toBe(`POST ${stack.upstream.origin}/orders/D-9002/refund`);
    expect(await result.locator('.json').textContent()).toContain('"reason"');
    // Arguments the tool refuses: the gateway's error and code next to the field.
    await page.fill('#arguments', JSON.stringify({ request: { amount: 'three' } }));
    await page.click('button:text("Prepare, do not send")');
    await expect.poll(() => result.locator('[role=alert]').textContent()).toMatch(/api:gateway:/);
    await page.fill('#arguments', '{not json');
    await page.click('button:text("Prepare, do not send")');
    await expect.poll(() => result.locator('[role=alert]').textContent()).toContain('api:request:invalid');
    expect(stack.upstream.requests.slice(before).filter((r) => /D-900/.test(r.url))).toEqual([]);
    expect(stack.upstream.requests.length).toBe(before);
    expect(bodies.filter((b) => b.includes(SECRET))).toEqual([]);
    await page.close();
  });

  it('a dry run renders the request `mt extop-call --dry-run` prints for the same tool and arguments', async () => {
    const args = JSON.stringify({ additionalInputs: { 'path.orderId': 'D-9010' } });
    const dir = await writeRepo(runsRepoFiles({ origin: stack.upstream.origin }));
    const cli = await runMt(
      [
        'extop-call',
        'get-order',
        '--repo',
        dir,
        '--args',
        args,
        '--secret',
        `orders-api-key=${SECRET}`,
        '--dry-run',
        '--json',
      ],
      { home: stack.home, env: { MT_EGRESS_ALLOW: '127.0.0.1' } },
    );
    await rm(dir, { recursive: true, force: true });
    expect(cli.code, cli.stderr).toBe(0);
    const printed = JSON.parse(cli.stdout) as {
      request: { method: string; url: string; headers: Record<string, string>; body?: unknown };
    };
    const page = await admin.newPage();
    await page.goto(`${base}/console/tools/get-order`);
    await page.fill('#arguments', args);
    await page.click('button:text("Prepare, do not send")');
    const result = page.locator('#dry-run-result');
    await expect
      .poll(() => result.locator('.request-line').textContent())
      .toBe(`${printed.request.method} ${printed.request.url}`);
    const shown = await result
      .locator('tbody tr')
      .evaluateAll((rows) => rows.map((r) => [r.querySelector('th')?.textContent, r.querySelector('td')?.textContent]));
    expect(Object.fromEntries(shown)).toEqual(
      Object.fromEntries(
        Object.entries(printed.request.headers).map(([k, v]) => [
          k,
          v.replaceAll('[secret]', '•••• (secret orders-api-key)'),
        ]),
      ),
    );
    expect(Object.values(printed.request.headers).some((v) => v.includes('[secret]'))).toBe(true);
    expect(printed.request.body).toBeUndefined();
    expect(await result.locator('.json').count()).toBe(0);
    await page.close();
  });

  it('a dry run without JavaScript answers the whole page; a user key sees no form and is refused', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    await signIn(page, base, stack.adminKey);
    await page.goto(`${base}/console/tools/get-order`);
    await page.fill('#arguments', JSON.stringify({ additionalInputs: { 'path.orderId': 'D-9003' } }));
    await Promise.all([page.waitForLoadState('load'), page.click('button:text("Prepare, do not send")')]);
    expect(await page.locator('#dry-run-result .request-line').textContent()).toContain('/orders/D-9003');
    const made = await stack.api.request<{ key: string }>('POST', '/v1/keys', { name: 'explore-user', role: 'user' });
    expect(made.status).toBe(201);
    await signIn(page, base, made.body.key);
    await page.goto(`${base}/console/tools/get-order`);
    expect(await page.locator('#arguments').count()).toBe(0);
    const token = await page.locator('input[name=_csrf]').first().getAttribute('value');
    const cookie = (await context.cookies()).find((c) => c.name === 'mt_console_session');
    const refused = await fetch(`${base}/console/tools/get-order/dry-run`, {
      method: 'POST',
      headers: {
        cookie: `mt_console_session=${cookie?.value}`,
        origin: base,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: `_csrf=${token}&arguments=%7B%7D`,
    });
    expect(refused.status).toBe(403);
    await context.close();
  });

  it('the overview draws its charts as SVG images with their figures as text, each linking to its runs', async () => {
    const page = await admin.newPage();
    await page.goto(`${base}/console/overview`);
    await screenshot(page, 'console-overview.png');
    // Runs an hour, 24 h and 7 d: an image with a title and a description, one bar segment a status and an hour.
    for (const [id, bars] of [
      ['ch-24h', 24],
      ['ch-7d', 168],
    ] as const) {
      const svg = page.locator(`#${id}-caption ~ svg`);
      expect(await svg.getAttribute('role')).toBe('img');
      expect(await svg.locator('title').first().textContent()).toContain('by status');
      expect(await svg.locator('desc').textContent()).toMatch(/^[1-9]\d* runs since .* UTC, one bar an hour/);
      expect(await svg.locator('desc').textContent()).toContain('Failed 1');
      expect(await svg.getAttribute('viewBox')).toBe(`0 0 ${bars * 10} 100`);
      expect(await svg.locator('rect.c-Failed title').textContent()).toMatch(/ UTC: 1 Failed$/);
    }
    // The numbers hour by hour, each hour a link to its runs.
    const hour = page.locator('#ch-24h-caption ~ details tbody tr').last();
    expect(await hour.locator('td').last().textContent()).toContain('Failed 1');
    // Tools: calls, errors and p95 latency written out; the tool's name links to the runs of the day that called it.
    const tools = page.locator('#ch-tools li');
    expect(await tools.count()).toBeGreaterThan(0);
    expect(await tools.first().locator('.bar-text').textContent()).toMatch(/^\d+ calls?, \d+ errors?, p95 \d/);
    expect(await tools.first().locator('a').getAttribute('href')).toMatch(/^\/console\/runs\?tool=[^&]+&since=/);
    // Tokens and cost by interaction, each a link to that interaction's runs of the day.
    const spend = page.locator('#ch-spend li', { hasText: 'support-desk' });
    expect(await spend.locator('.bar-text').textContent()).toMatch(/^[\d,]+ tokens, \$[\d.]+ \(2 runs\)$/);
    await Promise.all([page.waitForURL(/interaction=support-desk/), spend.locator('a').click()]);
    const listed = await rowIds(page);
    expect(listed.sort()).toEqual([`/console/runs/${failed.id}`, `/console/runs/${waiting.id}`].sort());
    // Approval waits: none answered yet here; the p50 and p95 of answered ones are tested in the store.
    await page.goto(`${base}/console/overview`);
    expect(await page.locator('#ov-waits ~ figure p').textContent()).toBe(
      'No approval was answered in the last 7 days.',
    );
    await page.close();
  });

  it("lists the runs that called a tool, from the overview's tool row, with the filter kept on a reload (REST, the SDK and mt run-list too)", async () => {
    // What the runs' own events say: the runs with a call of get-order, and of refund-order (asked about, waiting).
    const calledBy = async (tool: string) => {
      const ids: string[] = [];
      for (const run of [waiting, completed, failed]) {
        const events = await stack.api.events(run.id);
        const data = (e: (typeof events)[number]) => e.data as { name?: string; approval?: { functionName?: string } };
        if (
          events.some(
            (e) =>
              (e.type === 'tool-call-started' && data(e).name === tool) ||
              (e.type === 'approval-requested' && data(e).approval?.functionName === tool),
          )
        )
          ids.push(`/console/runs/${run.id}`);
      }
      return ids.sort();
    };
    const getOrder = await calledBy('get-order');
    expect(getOrder).toContain(`/console/runs/${waiting.id}`);
    expect(getOrder).not.toContain(`/console/runs/${completed.id}`);
    const page = await admin.newPage();
    await page.goto(`${base}/console/overview`);
    const row = page.locator('#ch-tools li', { hasText: 'get-order' });
    await Promise.all([page.waitForURL(/\/console\/runs\?tool=get-order/), row.locator('a').click()]);
    expect(new URL(page.url()).searchParams.get('since')).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/);
    expect((await rowIds(page)).sort()).toEqual(getOrder);
    expect(await page.inputValue('#tool')).toBe('get-order');
    await page.reload();
    expect(await page.inputValue('#tool')).toBe('get-order');
    expect((await rowIds(page)).sort()).toEqual(getOrder);
    expect(await page.locator('.filter-line').textContent()).toContain('tool get-order');
    // Typed in the form: in place, into the URL, and kept on a reload.
    await page.goto(`${base}/console/runs`);
    await page.fill('#tool', 'refund-order');
    await page.waitForURL((u) => u.searchParams.get('tool') === 'refund-order');
    await expect.poll(() => rowIds(page)).toEqual(await calledBy('refund-order'));
    await page.reload();
    expect(await page.inputValue('#tool')).toBe('refund-order');
    expect(await rowIds(page)).toEqual([`/console/runs/${waiting.id}`]);
    // A tool's page links to the runs that called it.
    await page.goto(`${base}/console/tools/get-order`);
    await Promise.all([
      page.waitForURL(/\/console\/runs\?tool=get-order$/),
      page.click('a:text-is("The runs that called it")'),
    ]);
    expect((await rowIds(page)).sort()).toEqual(getOrder);
    await page.goto(`${base}/console/runs?tool=no-such-tool`);
    expect(await page.locator('#runs-results').textContent()).toContain('No run matches.');
    await page.close();
    // GET /v1/runs?tool= answers the same runs.
    const listed = await stack.api.request<{ runs: { id: string }[] }>('GET', '/v1/runs?tool=get-order');
    expect(listed.status).toBe(200);
    expect(listed.body.runs.map((r) => `/console/runs/${r.id}`).sort()).toEqual(getOrder);
    const none = await stack.api.request<{ runs: unknown[] }>('GET', '/v1/runs?tool=no-such-tool');
    expect(none.body.runs).toEqual([]);
    // The TypeScript SDK and `mt run-list --tool` pass it on.
    const sdk = new Maitento({ baseUrl: stack.servers[0].url, apiKey: stack.adminKey });
    const fromSdk = await sdk.interactionRuns.list({ tool: 'refund-order' });
    expect(fromSdk.runs.map((r) => r.id)).toEqual([waiting.id]);
    const env = { MT_API_URL: stack.servers[0].url, MT_API_KEY: stack.adminKey };
    const cli = await runMt(['run-list', '--tool', 'get-order', '--json'], { home: stack.home, env });
    expect(cli.code, cli.stderr).toBe(0);
    const printed = JSON.parse(cli.stdout) as { runs: { id: string }[] };
    expect(printed.runs.map((r) => `/console/runs/${r.id}`).sort()).toEqual(getOrder);
  });

  describe('accessibility', () => {
    const pages: [string, string | (() => Promise<void>)][] = [
      ['the overview', '/console/overview'],
      ['the runs, filtered', '/console/runs?status=Failed&since=2000-01-01T00:00&q=a'],
      ['the runs, by a tool called', '/console/runs?tool=get-order'],
      ['the tools', '/console/tools'],
      ['a tool', '/console/tools/get-order'],
    ];
    it.each(pages.flatMap(([name]) => (['light', 'dark'] as const).map((scheme) => [name, scheme] as const)))(
      '%s page (%s)',
      async (name, scheme) => {
        const page = await admin.newPage();
        await page.emulateMedia({ colorScheme: scheme });
        await page.goto(`${base}${pages.find(([n]) => n === name)?.[1]}`);
        if (name === 'a tool') {
          await page.fill('#arguments', JSON.stringify({ additionalInputs: { 'path.orderId': 'D-9004' } }));
          await page.click('button:text("Prepare, do not send")');
          await page.locator('#dry-run-result .request-line').waitFor();
        }
        await page.evaluate(() => {
          for (const d of document.querySelectorAll('details')) d.open = true;
        });
        await expectAccessible(page);
        await page.close();
      },
    );

    it('every new page fits a 360 px wide screen without scrolling sideways', async () => {
      const context = await browser.newContext({ viewport: { width: 360, height: 780 } });
      const page = await context.newPage();
      await signIn(page, base, stack.adminKey);
      const widths: Record<string, number> = {};
      for (const [name, path] of pages) {
        await page.goto(`${base}${path}`);
        if (name === 'a tool') {
          await page.fill('#arguments', JSON.stringify({ request: { amount: 1 }, additionalInputs: {} }));
          await page.click('button:text("Prepare, do not send")');
          await page.locator('#dry-run-result [role=alert]').waitFor();
        }
        await page.evaluate(() => {
          for (const d of document.querySelectorAll('details')) d.open = true;
        });
        widths[name] = await page.evaluate(() => document.documentElement.scrollWidth);
      }
      expect(widths).toEqual(Object.fromEntries(Object.keys(widths).map((k) => [k, 360])));
      await context.close();
    });
  });
});
