import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AuthorizationServer,
  authorize,
  freePort,
  startAuthorizationServer,
} from '../helpers/authorization-server.js';
import type { RunView } from '../helpers/api.js';
import type { RunsStack } from '../helpers/stack.js';
import { expectAccessible, screenshot, signIn, startStackAndBrowser } from './browser.js';
import { setUpWithin, step } from '../helpers/steps.js';

// The console's pages of connections, schedules, triggers and outbound webhooks (docs/console.md, decision 0305) on a
// real `mt serve` and PostgreSQL: a real authorization server (oidc-provider) for the end users' connections, a
// schedule that ticks every second, a trigger's signed deliveries, and a receiver of the outbound webhooks on
// 127.0.0.1. Each page shows the rows the REST API answers; its action (delete a connection, pause and resume a
// schedule, send a test event) works; axe finds nothing in light and dark; nothing scrolls sideways at 360 px.
let stack: RunsStack;
let as: AuthorizationServer;
let browser: Browser;
let admin: BrowserContext;
let base: string;
let callbackUrl: string;
let receiver: Server;
const received: string[] = [];
const HOOK_SECRET = `whsec_${randomBytes(24).toString('base64')}`;
/** Every response body the browser received: no token, no secret in any. */
const bodies: string[] = [];
const tokens: string[] = [];
let waiting: RunView;
let endpointId: string;

async function newContext(options: Parameters<Browser['newContext']>[0] = {}): Promise<BrowserContext> {
  const context = await browser.newContext(options);
  context.on('response', async (response) => {
    try {
      bodies.push(await response.text());
    } catch {
      // a redirect has no body
    }
  });
  return context;
}

/** Connects `endUser` at the test provider as the person's browser would: the link, the consent, the callback. */
async function connect(endUser: string) {
  const link = await stack.api.request('POST', '/v1/connections/links', { provider: 'local-as', endUser });
  expect(link.status, JSON.stringify(link.body)).toBe(201);
  const back = await authorize(link.body.url, `${endUser}-sub`, callbackUrl);
  const code = back.searchParams.get('code');
  if (code) tokens.push(code);
  const done = await fetch(back, { redirect: 'manual', signal: AbortSignal.timeout(15_000) });
  expect(done.status, await done.text()).toBe(200);
}

function deliver(body: string, secret = HOOK_SECRET) {
  const id = `msg_${randomUUID()}`;
  const at = new Date();
  return fetch(`${base}/v1/hooks/default/orders`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign(id, at, body),
    },
    body,
    signal: AbortSignal.timeout(15_000),
  });
}

/** The text of each body row of the table `#id`, cells joined by " | ". */
function rowsOf(page: Page, id: string): Promise<string[]> {
  return page
    .locator(`#${id} tbody tr`)
    .evaluateAll((rows) =>
      rows.map((row) => [...row.children].map((cell) => (cell.textContent ?? '').trim()).join(' | ')),
    );
}

beforeAll(
  () =>
    setUpWithin(
      120_000,
      async () => {
        const port = await freePort();
        base = `http://127.0.0.1:${port}`;
        callbackUrl = `${base}/v1/connections/callback`;
        receiver = createServer((req, res) => {
          let body = '';
          req.on('data', (chunk: Buffer) => {
            body += chunk.toString();
          });
          req.on('end', () => {
            received.push(body);
            res.statusCode = 204;
            res.end();
          });
        });
        await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
        const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
        const scripts = await mkdtemp(join(tmpdir(), 'mt-e2e-console-automation-'));
        await writeFile(
          join(scripts, 'me.json'),
          JSON.stringify([{ toolCalls: [{ name: 'whoami', arguments: {} }] }, { text: 'Looked.' }]),
        );
        await writeFile(join(scripts, 'desk.json'), JSON.stringify([{ text: 'Done.' }]));
        as = await startAuthorizationServer({ redirectUri: callbackUrl });
        ({ stack, browser } = await startStackAndBrowser({
          deploy: false,
          env: {
            MT_PUBLIC_URL: base,
            MT_SCRIPTED_MODELS: scripts,
            MT_WEBHOOK_RETRY_BASE_MS: '100',
            MT_WEBHOOK_RETRY_MAX_MS: '1000',
          },
          serveArgs: ['--port', String(port)],
        }));
        for (const [name, value] of [
          ['local-as-client-secret', as.clientSecret],
          ['orders-hook', HOOK_SECRET],
        ]) {
          const made = await stack.api.request('POST', '/v1/secrets', { name, value });
          expect(made.status, JSON.stringify(made.body)).toBe(201);
        }
        await stack.api.deploy([
          {
            path: 'auth-providers/local-as.mtr',
            content: `issuer = "${as.issuer}"\nclientId = "${as.clientId}"\nclientSecret = @ref("local-as-client-secret")\nscopes = ["openid", "offline_access"]\nauthorizationParams = { prompt = "consent" }\n`,
          },
          {
            path: 'connectors/open-api/me.mtr',
            content: `method = "GET"\nurl = "${receiverUrl}/me"\ndescription = "Who the person is."\nauth = "OAuth2"\nprovider = @ref("local-as")\nscopes = ["calendar.read"]\n`,
          },
          {
            path: 'external-operations/open-api/whoami.mtr',
            content: 'connector = @ref("me")\nguidance = "Who am I."\n',
          },
          {
            path: 'agents/me-agent.mtr',
            content:
              'model = "scripted:me"\ninstructions = "Act for the person."\nfunctions = [ { ref = @ref("whoami") } ]\n',
          },
          {
            path: 'interactions/one-shot/me.mtr',
            content: 'agent = { name = "Helper" agent = @ref("me-agent") }\ntask = "Do it for the person."\n',
          },
          { path: 'agents/desk.mtr', content: 'model = "scripted:desk"\ninstructions = "Say done."\n' },
          {
            path: 'interactions/one-shot/desk.mtr',
            content:
              'agent = { name = "Desk" agent = @ref("desk") }\ntask = "Handle %%orderId%%"\ninputs.prompts = [ { name = "orderId" required = true } ]\n',
          },
          {
            path: 'schedules/every-second.mtr',
            content: 'interaction = @ref("desk")\ninputs = { orderId = "nightly" }\ncron = "* * * * * *"\n',
          },
          {
            path: 'triggers/orders.mtr',
            content:
              'interaction = @ref("desk")\ninputs = { orderId = { pointer = "/order" } }\nverify = { style = "standard-webhooks" secret = @ref("orders-hook") }\n',
          },
        ]);
        const endpoint = await stack.api.request('POST', '/v1/webhooks', {
          url: receiverUrl,
          events: ['run.completed', 'run.failed'],
          description: 'The on-call channel',
        });
        expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(201);
        endpointId = endpoint.body.endpoint.id;
        tokens.push(endpoint.body.secret);
        admin = await step('browser context', () => newContext());
        await signIn(await admin.newPage(), base, stack.adminKey);
      },
      { attempts: 2, undo: closeAll },
    ),
  310_000,
);

// Closes what the set-up made: at the end, and an abandoned set-up attempt's (safe to run twice).
async function closeAll(): Promise<void> {
  await browser?.close();
  await stack?.close();
  await as?.close();
  receiver?.closeAllConnections();
  await new Promise((resolve) => receiver?.close(resolve));
}

afterAll(closeAll);

describe('the console of connections, schedules, triggers and webhooks', { timeout: 60_000 }, () => {
  it('1. pauses and resumes a schedule from its pages, which show its ticks as the API does', async () => {
    const ticked = async () => (await stack.api.request('GET', '/v1/schedules/every-second')).body;
    await expect.poll(async () => (await ticked()).lastTick, { timeout: 15_000 }).not.toBeNull();
    const page = await admin.newPage();
    await page.goto(`${base}/console/schedules`);
    expect(await page.locator('nav a[aria-current=page]').textContent()).toBe('Schedules');
    const [row] = await rowsOf(page, 'schedules');
    expect(row).toMatch(
      /^every-second \| \* \* \* \* \* \* \(UTC\), runs desk \| Ticking \| \d{4}-\d\d-\d\d .* UTC \| /,
    );
    // Pause: the row says so, the API too, and no next tick.
    await Promise.all([page.waitForLoadState('load'), page.click('text=Pause every-second')]);
    expect(await page.locator('[role=status]').textContent()).toContain('every-second is paused');
    expect((await rowsOf(page, 'schedules'))[0]).toContain('| Paused |');
    expect(await ticked()).toMatchObject({ paused: true, nextTick: null });
    // Its page: the ticks the API lists, newest first, each with its run.
    await Promise.all([page.waitForURL(/\/console\/schedules\/every-second$/), page.click('#schedule-every-second a')]);
    const ticks = (await stack.api.request('GET', '/v1/schedules/every-second/ticks')).body as {
      tick: string;
      status: string;
      runId: string | null;
    }[];
    expect(ticks.length).toBeGreaterThan(0);
    const shown = await rowsOf(page, 'ticks');
    expect(shown).toHaveLength(ticks.length);
    shown.forEach((text, i) => {
      expect(text).toContain(ticks[i].tick.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC'));
      expect(text).toContain(ticks[i].status);
      if (ticks[i].runId) expect(text).toContain(ticks[i].runId?.slice(0, 8));
    });
    await screenshot(page, 'console-schedule.png');
    // Resume from the schedule's page, then pause again (the other tests need no ticks).
    await Promise.all([page.waitForLoadState('load'), page.click('text=Resume every-second')]);
    expect(await page.locator('[role=status]').textContent()).toContain('ticking again');
    expect(await ticked()).toMatchObject({ paused: false });
    await Promise.all([page.waitForLoadState('load'), page.click('text=Pause every-second')]);
    const audit = await stack.api.request('GET', '/v1/audit?action=schedule.resumed');
    expect(audit.body.entries[0]).toMatchObject({ actor: { kind: 'key', via: 'console' }, action: 'schedule.resumed' });
    await page.close();
  });

  it('2. lists connections (never a token), shows a run waiting for one with its connect link, and deletes one', async () => {
    await connect('alice');
    const started = await stack.api.startRun('me', {}, { endUser: 'bob' });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    waiting = await stack.api.waitForRun(started.body.id, (r) => r.status === 'PendingAuthorization');
    const page = await admin.newPage();
    // The run page says what it waits on, with the link to hand the end user.
    await page.goto(`${base}/console/runs/${waiting.id}`);
    expect(await page.locator('#run-status').textContent()).toBe('PendingAuthorization');
    const wait = page.locator('#run-authorization');
    expect(await wait.textContent()).toContain('bob to connect at local-as');
    expect(await wait.locator('a').getAttribute('href')).toBe(waiting.pendingAuthorization?.url);

    await page.goto(`${base}/console/connections`);
    const list = (await stack.api.request('GET', '/v1/connections')).body as { id: string; endUser: string }[];
    expect(list.map((c) => c.endUser)).toEqual(['alice']);
    const rows = await rowsOf(page, 'connections');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatch(/^local-as \| alice \| Active \| openid offline_access \| Connected \d{4}-/);
    // Delete: revoked and deleted, through the console's form (its CSRF token), audited as the console's.
    await Promise.all([page.waitForLoadState('load'), page.click('text=Delete alice at local-as')]);
    expect(await page.locator('[role=status]').textContent()).toContain('alice at local-as was revoked and deleted');
    expect(await page.locator('#connections').count()).toBe(0);
    expect((await stack.api.request('GET', '/v1/connections')).body).toEqual([]);
    const audit = await stack.api.request('GET', '/v1/audit?action=connection.deleted');
    expect(audit.body.entries[0]).toMatchObject({ actor: { via: 'console' }, target: { id: list[0].id } });
    await connect('carol');
    for (const token of tokens) expect(bodies.some((b) => b.includes(token))).toBe(false);
    await page.close();
  });

  it('3. lists the triggers with their URLs, and a trigger’s delivery log and refusals', async () => {
    const ok = await deliver(JSON.stringify({ order: 'A-77' }));
    expect(ok.status).toBe(202);
    const { runId } = (await ok.json()) as { runId: string };
    expect(
      (await deliver(JSON.stringify({ order: 'A-78' }), `whsec_${randomBytes(24).toString('base64')}`)).status,
    ).toBe(401);
    const page = await admin.newPage();
    await page.goto(`${base}/console/triggers`);
    const [row] = await rowsOf(page, 'triggers');
    expect(row).toBe(`orders | ${base}/v1/hooks/default/orders | desk (signed the standard-webhooks way) | Enabled`);
    await Promise.all([page.waitForURL(/\/console\/triggers\/orders$/), page.click('#trigger-orders a')]);
    expect(await page.locator('#trigger-url').textContent()).toBe(`${base}/v1/hooks/default/orders`);
    const log = (await stack.api.request('GET', '/v1/triggers/orders/deliveries')).body;
    expect(log.rejected).toEqual({ signature: 1 });
    expect(await page.locator('#rejected').textContent()).toBe('1 for signature');
    const rows = await rowsOf(page, 'deliveries');
    expect(rows).toHaveLength(log.deliveries.length);
    expect(rows[0]).toContain(`| ${log.deliveries[0].eventId} | started HTTP 202 | ${runId.slice(0, 8)}`);
    await page.close();
  });

  it('4. lists the webhook endpoints, sends a test event and shows its delivery; other roles see no webhooks', async () => {
    const page = await admin.newPage();
    await page.goto(`${base}/console/webhooks`);
    const rows = await rowsOf(page, 'webhooks');
    expect(rows).toEqual([
      expect.stringMatching(
        /^http:\/\/127\.0\.0\.1:\d+\/hook The on-call channel \| run\.completed, run\.failed \| Enabled$/,
      ),
    ]);
    await page.locator(`#webhook-${endpointId} a`).click();
    await Promise.all([page.waitForLoadState('load'), page.click('text=Send a test event')]);
    expect(await page.locator('[role=status]').textContent()).toContain('A test event is on its way');
    await expect
      .poll(() => received.some((b) => JSON.parse(b).type === 'webhook.test'), { timeout: 15_000 })
      .toBe(true);
    const deliveries = async () =>
      (
        (await stack.api.request('GET', `/v1/webhooks/${endpointId}/deliveries`)).body as {
          id: string;
          eventType: string;
          status: string;
        }[]
      ).filter((d) => d.eventType === 'webhook.test');
    await expect
      .poll(async () => (await deliveries()).find((d) => d.status === 'Delivered'), { timeout: 15_000 })
      .toBeTruthy();
    await page.goto(`${base}/console/webhooks/${endpointId}`);
    const test = (await deliveries()).find((d) => d.status === 'Delivered');
    const shown = (await page.locator(`#delivery-${test?.id}`).textContent()) ?? '';
    expect(shown).toMatch(/webhook\.test.*Delivered.*1\s*HTTP 204/s);
    // An id that is none: 404 with its code, as the REST route answers.
    const none = await page.goto(`${base}/console/webhooks/not-an-id`);
    expect(none?.status()).toBe(404);
    expect(await page.locator('[role=alert]').textContent()).toContain('api:webhooks:not-found');

    // A user key: no webhooks in its navigation and none for it; no Pause button; a Delete button (it may run).
    const made = await stack.api.request<{ key: string }>('POST', '/v1/keys', { name: 'console-user', role: 'user' });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const context = await newContext();
    const user = await context.newPage();
    await signIn(user, base, made.body.key);
    expect(await user.locator('nav >> text=Webhooks').count()).toBe(0);
    expect((await user.goto(`${base}/console/webhooks`))?.status()).toBe(403);
    expect((await user.goto(`${base}/console/webhooks/${endpointId}`))?.status()).toBe(403);
    await user.goto(`${base}/console/schedules`);
    expect(await user.locator('#schedules tbody tr').count()).toBe(1);
    expect(await user.getByRole('button', { name: /Pause|Resume/ }).count()).toBe(0);
    await user.goto(`${base}/console/connections`);
    expect(await user.getByRole('button', { name: 'Delete carol at local-as' }).count()).toBe(1);
    await context.close();
    await page.close();
  });

  describe('5. every page has no WCAG 2.2 AA violation (axe-core) and fits 360 px', () => {
    const pages: [string, () => string][] = [
      ['the connections', () => '/console/connections'],
      ['the schedules', () => '/console/schedules'],
      ['a schedule', () => '/console/schedules/every-second'],
      ['the triggers', () => '/console/triggers'],
      ['a trigger', () => '/console/triggers/orders'],
      ['the webhooks', () => '/console/webhooks'],
      ['a webhook endpoint', () => `/console/webhooks/${endpointId}`],
      ['a run waiting for a connection', () => `/console/runs/${waiting.id}`],
    ];

    it.each(pages.flatMap(([name]) => (['light', 'dark'] as const).map((scheme) => [name, scheme] as const)))(
      '%s page (%s)',
      async (name, scheme) => {
        const path = pages.find(([n]) => n === name)?.[1] ?? (() => '/console');
        const page = await admin.newPage();
        await page.emulateMedia({ colorScheme: scheme });
        expect((await page.goto(`${base}${path()}`))?.status()).toBe(200);
        await page.evaluate(() => {
          for (const d of document.querySelectorAll('details')) d.open = true;
        });
        await expectAccessible(page);
        await page.close();
      },
    );

    it('no page scrolls sideways on a 360 px wide screen', async () => {
      const context = await newContext({ viewport: { width: 360, height: 780 } });
      const page = await context.newPage();
      await signIn(page, base, stack.adminKey);
      const widths: Record<string, number> = {};
      for (const [name, path] of pages) {
        await page.goto(`${base}${path()}`);
        widths[name] = await page.evaluate(() => document.documentElement.scrollWidth);
      }
      expect(widths).toEqual(Object.fromEntries(Object.keys(widths).map((k) => [k, 360])));
      await context.close();
    });
  });
});
