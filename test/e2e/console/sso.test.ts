import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import pg from 'pg';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApprovalView, RunView } from '../helpers/api.js';
import { runsRepoFiles } from '../helpers/config-repo.js';
import type { RunsStack } from '../helpers/stack.js';
import { expectAccessible, startStackAndBrowser } from './browser.js';
import { setUpWithin } from '../helpers/steps.js';
import { freePort } from '@maitento/testkit';

// Single sign-on for people (docs/sso.md): a real `mt serve` on PostgreSQL signs people in through a local OpenID
// Connect provider (panva's oidc-provider, started here on 127.0.0.1 with its development sign-in pages), driven by
// Debian's Chromium headless. The provider's accounts carry a `groups` claim (served from its userinfo endpoint);
// MT_OIDC_ROLES maps `support-leads` to approver and `platform` to admin in `default`, and `staff` to user in `billing`.

/** The accounts of the provider: any password signs in (oidc-provider's development pages). */
const ACCOUNTS: Record<string, { name: string; email: string; groups: string[] }> = {
  alice: { name: 'Alice Lead', email: 'alice@example.com', groups: ['support-leads', 'staff'] },
  root: { name: 'Ops Root', email: 'root@example.com', groups: ['platform'] },
  mallory: { name: 'Mallory Contractor', email: 'mallory@example.com', groups: ['contractors'] },
};
const CLIENT_SECRET = `oidc-secret-${randomBytes(12).toString('hex')}`;
/** The ID tokens' lifetime in seconds, read by the provider for each token: the expiry test shortens it. */
let idTokenTtl = 3600;

let idp: Server;
let issuer: string;
let stack: RunsStack;
let browser: Browser;
let base: string;
const contexts: BrowserContext[] = [];

async function startProvider(mtBase: string): Promise<void> {
  idp = createServer();
  await new Promise<void>((resolve) => idp.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(idp.address() as AddressInfo).port}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: 'maitento-console',
        client_secret: CLIENT_SECRET,
        redirect_uris: [`${mtBase}/console/login/oidc/callback`],
        post_logout_redirect_uris: [`${mtBase}/console/login`],
        response_types: ['code'],
        grant_types: ['authorization_code'],
      },
    ],
    claims: { openid: ['sub'], profile: ['name'], email: ['email'], groups: ['groups'] },
    scopes: ['openid', 'profile', 'email', 'groups'],
    pkce: { required: () => true },
    features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: true } },
    ttl: { IdToken: () => idTokenTtl },
    cookies: { keys: [randomBytes(16).toString('hex')] },
    async findAccount(_ctx, id) {
      const account = ACCOUNTS[id];
      if (account === undefined) return undefined;
      return { accountId: id, claims: async () => ({ sub: id, ...account }) };
    },
  });
  idp.on('request', provider.callback());
}

beforeAll(
  () =>
    setUpWithin(
      120_000,
      async () => {
        const port = await freePort();
        const mtBase = `http://127.0.0.1:${port}`;
        await startProvider(mtBase);
        ({ stack, browser } = await startStackAndBrowser({
          serveArgs: ['--port', String(port)],
          env: {
            MT_PUBLIC_URL: mtBase,
            MT_OIDC_ISSUER: issuer,
            MT_OIDC_CLIENT_ID: 'maitento-console',
            MT_OIDC_CLIENT_SECRET: CLIENT_SECRET,
            MT_OIDC_SCOPES: 'openid profile email groups',
            MT_OIDC_PROVIDER_NAME: 'Example ID',
            MT_OIDC_ROLES: JSON.stringify({
              'support-leads': { default: 'approver' },
              platform: { default: 'admin' },
              staff: { billing: 'user' },
            }),
          },
        }));
        base = stack.servers[0].url;
        expect(base).toBe(mtBase);
        expect((await stack.api.request('POST', '/v1/namespaces', { name: 'billing' })).status).toBe(201);
      },
      { attempts: 2, undo: closeAll },
    ),
  310_000,
);

// Closes what the set-up made: at the end, and an abandoned set-up attempt's (safe to run twice).
async function closeAll(): Promise<void> {
  for (const context of contexts) await context.close().catch(() => undefined);
  await browser?.close();
  await stack?.close();
  await new Promise((resolve) => (idp ? idp.close(resolve) : resolve(undefined)));
}

afterAll(closeAll);

/** Every response body the browser received from the console, to look for the client secret in. */
const bodies: string[] = [];

async function newPage(): Promise<Page> {
  const context = await browser.newContext();
  contexts.push(context);
  context.on('response', async (response) => {
    if (!response.url().startsWith(base)) return;
    try {
      bodies.push(await response.text());
    } catch {
      // a redirect or an aborted response has no body
    }
  });
  return context.newPage();
}

async function query<T extends Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: stack.db?.url });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as T[];
  } finally {
    await client.end();
  }
}

/** Signs in at the provider's pages as `login` from the console's sign-in page; resolves on the page that follows. */
async function signInWithProvider(page: Page, login: string): Promise<void> {
  await page.goto(`${base}/console/login`);
  await Promise.all([
    page.waitForURL(`${issuer}/**`, { waitUntil: 'commit' }),
    page.click('text=Sign in with Example ID'),
  ]);
  await page.fill('input[name=login]', login);
  await page.fill('input[name=password]', 'any password');
  await page.click('button[type=submit]');
  // The provider's consent page when it asks (a new grant for the client), then back to the console's callback.
  const consent = page.locator('button:has-text("Continue")');
  const where = await Promise.race([
    page.waitForURL(`${base}/console/**`, { waitUntil: 'commit' }).then(() => 'console' as const),
    consent.waitFor().then(() => 'consent' as const),
  ]);
  if (where === 'consent') {
    await Promise.all([page.waitForURL(`${base}/console/**`, { waitUntil: 'commit' }), consent.click()]);
  }
}

async function startRun(message: string): Promise<RunView> {
  const started = await stack.api.startRun('support-desk', { message });
  expect(started.status, JSON.stringify(started.body)).toBe(201);
  return started.body;
}

async function pendingOf(id: string): Promise<ApprovalView> {
  const run = await stack.api.waitForRun(id, (r) => r.status !== 'Running');
  expect(run.status, JSON.stringify(run)).toBe('PendingApproval');
  return run.pendingApproval as ApprovalView;
}

describe('single sign-on in the console', { timeout: 90_000 }, () => {
  let alicePage: Page;
  let rootPage: Page;
  let aliceId: string;

  it('signs a person in through the provider, with the role their groups claim maps to', async () => {
    const page = await newPage();
    await page.goto(`${base}/console/login`);
    // API-key sign-in stays, and the provider's button is offered beside it.
    expect(await page.locator('#key').count()).toBe(1);
    await expectAccessible(page);
    await signInWithProvider(page, 'alice');
    await page.waitForURL(`${base}/console/approvals`);
    expect(await page.locator('h1').textContent()).toBe('Approvals');
    expect(await page.locator('header').textContent()).toContain(
      'Signed in as Alice Lead (alice@example.com) in default',
    );
    // An approver: no audit log in the navigation, and the audit page refuses.
    expect(await page.locator('nav >> text=Audit log').count()).toBe(0);
    await expectAccessible(page);
    const [cookie] = (await page.context().cookies()).filter((c) => c.name === 'mt_console_session');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/console' });

    const people = await query<{ id: string; issuer: string; subject: string; name: string; email: string }>(
      'SELECT id, issuer, subject, name, email FROM mt_people',
    );
    expect(people).toEqual([
      { id: expect.any(String), issuer, subject: 'alice', name: 'Alice Lead', email: 'alice@example.com' },
    ]);
    aliceId = people[0].id;
    const [session] = await query<{ roles: unknown; namespace: string; key_id: null; seconds: number }>(
      'SELECT roles, namespace, key_id, extract(epoch FROM expires_at - created_at)::float AS seconds ' +
        'FROM mt_console_sessions WHERE person_id = $1',
      [aliceId],
    );
    // Bounded by the ID token's hour, not the 12 hours of MT_OIDC_SESSION_SECONDS' default.
    expect(session).toMatchObject({
      roles: { default: 'approver', billing: 'user' },
      namespace: 'default',
      key_id: null,
    });
    expect(session.seconds).toBeGreaterThan(3500);
    expect(session.seconds).toBeLessThanOrEqual(3601);

    const signedIn = await stack.api.request('GET', '/v1/audit?action=console.signed-in');
    expect(signedIn.body.entries[0]).toMatchObject({
      actor: { kind: 'person', id: `person:${aliceId}`, role: 'approver', via: 'console' },
      target: { kind: 'person', id: aliceId },
      after: { name: 'Alice Lead', email: 'alice@example.com', issuer, subject: 'alice', role: 'approver' },
    });
    // And one in billing, for its admins, with her role there.
    const billing = await query<{ actor_id: string; actor_role: string }>(
      "SELECT actor_id, actor_role FROM mt_audit WHERE namespace = 'billing' AND action = 'console.signed-in'",
    );
    expect(billing).toEqual([{ actor_id: `person:${aliceId}`, actor_role: 'user' }]);
    alicePage = page;
  });

  it('records the person who answers an approval, in the approval and the audit log', async () => {
    const run = await startRun('Refund order 7001: the parcel never arrived');
    const approval = await pendingOf(run.id);
    const page = alicePage;
    await page.goto(`${base}/console/approvals/${approval.id}`);
    await expectAccessible(page);
    await Promise.all([page.waitForURL(/decided=/), page.click('#approve')]);
    const answered = await stack.api.request('GET', `/v1/approvals/${approval.id}`);
    expect(answered.body).toMatchObject({
      status: 'Approved',
      answeredBy: { keyId: `person:${aliceId}`, keyName: 'Alice Lead (alice@example.com)' },
    });
    const audit = await stack.api.request('GET', `/v1/audit?action=approval.approved&actor=person:${aliceId}`);
    expect(audit.body.entries).toHaveLength(1);
    expect(audit.body.entries[0]).toMatchObject({
      actor: { kind: 'person', id: `person:${aliceId}`, role: 'approver', via: 'console' },
      target: { kind: 'approval', id: approval.id },
    });
    await stack.api.waitForRun(run.id, (r) => r.status === 'Completed');
  });

  it('follows a policy that names a person: another person, even an admin, may not answer', async () => {
    const files = runsRepoFiles({ origin: stack.upstream.origin }).map((f) =>
      f.path.endsWith('/refund-order.mtr')
        ? { ...f, content: `${f.content}approval.approvers = ["person:${aliceId}"]\n` }
        : f,
    );
    await stack.api.deploy(files);
    const run = await startRun('Refund order 7002: it arrived broken');
    const approval = await pendingOf(run.id);

    rootPage = await newPage();
    await signInWithProvider(rootPage, 'root');
    await rootPage.waitForURL(`${base}/console/approvals`);
    await rootPage.goto(`${base}/console/approvals/${approval.id}`);
    const [refused] = await Promise.all([
      rootPage.waitForResponse((r) => r.request().method() === 'POST'),
      rootPage.click('#approve'),
    ]);
    expect(refused.status()).toBe(403);
    expect(await rootPage.locator('[role=alert]').first().textContent()).toContain('api:approvals:not-an-approver');
    const byKey = await stack.api.request('POST', `/v1/approvals/${approval.id}/approve`, {});
    expect(byKey.status).toBe(403);

    await alicePage.goto(`${base}/console/approvals/${approval.id}`);
    await Promise.all([alicePage.waitForURL(/decided=/), alicePage.click('#approve')]);
    const answered = await stack.api.request('GET', `/v1/approvals/${approval.id}`);
    expect(answered.body).toMatchObject({ status: 'Approved', answeredBy: { keyId: `person:${aliceId}` } });
    await stack.api.waitForRun(run.id, (r) => r.status === 'Completed');
  });

  it('shows an admin person the audit log, people named as actors', async () => {
    const page = rootPage;
    await page.goto(`${base}/console/approvals`);
    await page.click('nav >> text=Audit log');
    expect(await page.locator('h1').textContent()).toBe('Audit log');
    const rows = await page.locator('tbody tr').allTextContents();
    expect(rows.some((r) => /person [0-9a-f]{8} \(admin\) via console\s*console\.signed-in/.test(r))).toBe(true);
    expect(rows.some((r) => /person [0-9a-f]{8} \(approver\) via console\s*approval\.approved/.test(r))).toBe(true);
    await expectAccessible(page);
  });

  it('switches a person with roles in two namespaces between them', async () => {
    const page = alicePage;
    await page.goto(`${base}/console/runs`);
    expect(await page.locator('#namespace option').allTextContents()).toEqual(['billing', 'default']);
    await expectAccessible(page);
    await page.selectOption('#namespace', 'billing');
    await Promise.all([page.waitForURL(`${base}/console/approvals`), page.click('button:has-text("Show")')]);
    expect(await page.locator('header').textContent()).toContain('in billing');
    // Billing has no runs; default's are not shown here.
    await page.goto(`${base}/console/runs`);
    expect(await page.locator('main').textContent()).not.toContain('support-desk');
    // Only a namespace of hers: another is refused and nothing changes.
    const csrf = await page.locator('input[name=_csrf]').first().getAttribute('value');
    const other = await page.request.post(`${base}/console/namespace`, {
      headers: { origin: base },
      form: { _csrf: csrf ?? '', namespace: 'elsewhere' },
    });
    expect(other.status()).toBe(403);
    await page.selectOption('#namespace', 'default');
    await Promise.all([page.waitForURL(`${base}/console/approvals`), page.click('button:has-text("Show")')]);
    expect(await page.locator('header').textContent()).toContain('in default');
    await page.goto(`${base}/console/runs`);
    expect(await page.locator('main').textContent()).toContain('support-desk');
  });

  it('signs out of the console and, through its end-session endpoint, of the provider', async () => {
    const page = alicePage;
    await page.goto(`${base}/console/approvals`);
    await Promise.all([page.waitForURL(`${issuer}/**`, { waitUntil: 'commit' }), page.click('text=Sign out')]);
    // The provider asks whether to end its own session too; yes, and it sends the person back to the console.
    await Promise.all([
      page.waitForURL(`${base}/console/login`, { waitUntil: 'commit' }),
      page.click('button:has-text("Yes, sign me out")'),
    ]);
    expect(await query('SELECT 1 FROM mt_console_sessions WHERE person_id = $1', [aliceId])).toEqual([]);
    const signedOut = await stack.api.request('GET', '/v1/audit?action=console.signed-out');
    expect(signedOut.body.entries[0]).toMatchObject({
      actor: { kind: 'person', id: `person:${aliceId}`, role: 'approver', via: 'console' },
      target: { kind: 'person', id: aliceId },
    });
    await page.goto(`${base}/console/approvals`);
    expect(new URL(page.url()).pathname).toBe('/console/login');
    // The provider's session ended too: signing in again asks for the login.
    await page.click('text=Sign in with Example ID');
    await page.waitForSelector('input[name=login]');
  });

  it('refuses a person whose claims map to no role, with a page that says why and a code', async () => {
    const page = await newPage();
    await signInWithProvider(page, 'mallory');
    expect(new URL(page.url()).pathname).toBe('/console/login/oidc/callback');
    await page.waitForSelector('[role=alert]');
    const alert = await page.locator('[role=alert]').textContent();
    expect(alert).toContain('signed in at Example ID as Mallory Contractor');
    expect(alert).toContain('api:console:no-role');
    expect((await page.context().cookies()).filter((c) => c.name === 'mt_console_session')).toEqual([]);
    expect(
      await query(
        "SELECT 1 FROM mt_console_sessions s JOIN mt_people p ON p.id = s.person_id WHERE p.subject = 'mallory'",
      ),
    ).toEqual([]);
    await expectAccessible(page);
  });

  it('refuses a callback the browser did not start (no sign-in cookie, or another state)', async () => {
    const page = await newPage();
    const forged = await page.goto(`${base}/console/login/oidc/callback?code=stolen&state=guessed&iss=${issuer}`);
    expect(forged?.status()).toBe(401);
    expect(await page.locator('[role=alert]').textContent()).toContain('api:console:sso-failed');
    // Started in this browser, but the state coming back is another one.
    await page.goto(`${base}/console/login/oidc`, { waitUntil: 'commit' });
    const other = await page.goto(`${base}/console/login/oidc/callback?code=stolen&state=guessed&iss=${issuer}`);
    expect(other?.status()).toBe(401);
    expect(await page.locator('[role=alert]').textContent()).toContain('api:console:sso-failed');
    expect((await page.context().cookies()).filter((c) => c.name === 'mt_console_session')).toEqual([]);
  });

  it('ends a session when its ID token expires', async () => {
    idTokenTtl = 4;
    try {
      const page = await newPage();
      await signInWithProvider(page, 'alice');
      await page.waitForURL(`${base}/console/approvals`);
      const [session] = await query<{ seconds: number }>(
        'SELECT extract(epoch FROM expires_at - created_at)::float AS seconds FROM mt_console_sessions ' +
          'WHERE person_id = $1',
        [aliceId],
      );
      expect(session.seconds).toBeLessThanOrEqual(4.5);
      // Past the ID token's expiry, the next page is the sign-in page.
      await expect
        .poll(
          async () => {
            await page.goto(`${base}/console/runs`);
            return new URL(page.url()).pathname;
          },
          { timeout: 30_000, interval: 1000 },
        )
        .toBe('/console/login');
      const form = await page.request.post(`${base}/console/runs/00000000-0000-4000-8000-000000000000/cancel`, {
        headers: { origin: base },
        form: { _csrf: 'x' },
      });
      expect(form.status()).toBe(401);
    } finally {
      idTokenTtl = 3600;
    }
  });

  it('shows the client secret in no page and no log line, and keeps no token of the provider', async () => {
    expect(bodies.length).toBeGreaterThan(20);
    for (const body of bodies) expect(body).not.toContain(CLIENT_SECRET);
    expect(stack.servers[0].log()).not.toContain(CLIENT_SECRET);
    const stored = JSON.stringify([
      await query('SELECT * FROM mt_console_sessions'),
      await query('SELECT * FROM mt_people'),
      await query('SELECT * FROM mt_audit'),
    ]);
    expect(stored).not.toContain(CLIENT_SECRET);
    // No JWT (an ID or access token of the provider's) is stored.
    expect(stored).not.toMatch(/eyJ[\w-]+\.eyJ[\w-]+\./);
  });
});
