import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunView } from '../helpers/api.js';
import { runsRepoFiles, writeRepo } from '../helpers/config-repo.js';
import type { RunsStack } from '../helpers/stack.js';
import { runMt } from '../support/harness.js';
import { expectAccessible, screenshot, signIn, startStackAndBrowser, signedInContext } from './browser.js';
import { setUpWithin } from '../helpers/steps.js';

// A tool's versions and their diff and its dry run from a form generated from its schema, an interaction started
// from a form of its inputs, a conversation chatted with, knowledge bases and file systems (decision 0360), on a real
// `mt serve` with PostgreSQL and the scripted model, driven by Debian's Chromium headless.
let stack: RunsStack;
let browser: Browser;
let admin: BrowserContext;
let base: string;
let scripts: string;
let kbId: string;
let fsId: string;
const SECRET = `sk-catalog-${randomBytes(12).toString('hex')}`;
const started: string[] = [];

const chatFiles = [
  { path: 'agents/chat-agent.mtr', content: 'model = "scripted:chat"\ninstructions = "Chat with the customer."\n' },
  {
    path: 'interactions/conversation/chat.mtr',
    content: `agent = { name = "Desk" agent = @ref("chat-agent") }
task = "A customer writes: %%message%%"
inputs.prompts = [ { name = "message" description = "The first message" required = true } ]
`,
  },
];

/** The same repo with refund-order's body taking a `note` as well: a second version of the connector and the tool. */
function secondVersion(files: { path: string; content: string }[]) {
  return files.map((f) =>
    f.path === 'connectors/open-api/orders-refund.mtr'
      ? {
          ...f,
          content: f.content.replace(
            'reason = { type = "string" description = "Why, in words the customer will read" }',
            'reason = { type = "string" description = "Why, in words the customer will read" }\n    note = { type = "string" description = "For the team" }',
          ),
        }
      : f,
  );
}

beforeAll(
  () =>
    setUpWithin(
      120_000,
      async () => {
        scripts = await mkdtemp(join(tmpdir(), 'mt-e2e-console-catalog-'));
        await writeFile(
          join(scripts, 'chat.json'),
          JSON.stringify([
            { text: 'CHAT-1 Hello, what can I do for you?' },
            { text: 'CHAT-2 Your refund is on its way.' },
          ]),
        );
        ({ stack, browser } = await startStackAndBrowser({ deploy: false, env: { MT_SCRIPTED_MODELS: scripts } }));
        const secret = await stack.api.request('POST', '/v1/secrets', { name: 'orders-api-key', value: SECRET });
        expect(secret.status, JSON.stringify(secret.body)).toBe(201);
        const files = [...runsRepoFiles({ origin: stack.upstream.origin }), ...chatFiles];
        await stack.api.deploy(files);
        await stack.api.deploy(secondVersion(files));
        const kb = await stack.api.request('POST', '/v1/knowledge-bases', { name: 'policies' });
        expect(kb.status, JSON.stringify(kb.body)).toBe(201);
        kbId = kb.body.id;
        const fs = await stack.api.request('POST', '/v1/file-systems', { name: 'reports' });
        expect(fs.status, JSON.stringify(fs.body)).toBe(201);
        fsId = fs.body.id;
        for (const [path, content] of [
          ['readme.txt', 'What is here.\n'],
          ['reports/april.md', '# April\n\n12 orders refunded.\n'],
          ['reports/2026/march.md', '# March\n\n41 orders refunded.\n'],
        ]) {
          const put = await stack.api.request('POST', `/v1/file-systems/${fsId}/files`, { path, content });
          expect(put.status, JSON.stringify(put.body)).toBe(201);
        }
        base = stack.servers[0].url.replace(/\/$/, '');
        admin = await signedInContext(browser, base, stack.adminKey);
      },
      { attempts: 2, undo: closeAll },
    ),
  310_000,
);

// Closes what the set-up made: at the end, and an abandoned set-up attempt's (safe to run twice).
async function closeAll(): Promise<void> {
  for (const id of started) await stack?.api.request('POST', `/v1/runs/${id}/cancel`, {});
  await browser?.close();
  await stack?.close();
  if (scripts) await rm(scripts, { recursive: true, force: true });
}

afterAll(closeAll);

describe('the console: tools, interactions, chats, knowledge and files', { timeout: 60_000 }, () => {
  it("a tool's page lists its versions and compares any two with the deploy plan's words", async () => {
    const page = await admin.newPage();
    await page.goto(`${base}/console/tools/refund-order`);
    const versions = await page.locator('#versions-heading + table tbody tr td:first-child').allTextContents();
    expect(versions).toEqual(['v2', 'v1']);
    // Keyboard only: the two selects and Compare.
    await page.selectOption('#diff-from', '1');
    await page.selectOption('#diff-to', '2');
    await page.focus('#diff-to');
    await page.keyboard.press('Tab');
    await Promise.all([page.waitForURL(/from=1&to=2/), page.keyboard.press('Enter')]);
    const diff = page.locator('#version-diff');
    expect(await diff.locator('h3').textContent()).toBe('From v1 to v2');
    const changes = await diff.locator('li').allTextContents();
    expect(changes).toContain('parameter added: request.note');
    expect(changes.some((c) => /connector orders-refund: version 1 → 2/.test(c))).toBe(true);
    expect(await diff.locator('details').last().textContent()).toContain('"note"');
    // The other way round, the note goes: a removed parameter is breaking.
    await page.goto(`${base}/console/tools/refund-order?from=2&to=1`);
    expect(
      await page.locator('#version-diff li', { hasText: 'parameter removed: request.note' }).textContent(),
    ).toContain('breaking');
    await page.close();
  });

  it('a dry run from the form generated from the schema renders the request `mt extop-call --dry-run` prints', async () => {
    const page = await admin.newPage();
    await page.goto(`${base}/console/tools/get-order`);
    const form = page.locator('form.schema-form');
    // The schema's fields: the path parameter a required text, the query boolean an optional select.
    expect(await form.locator('label[for="f-arg-additionalInputs-path-orderId"]').textContent()).toContain('required');
    expect(await form.locator('select#f-arg-additionalInputs-query-verbose option').allTextContents()).toEqual([
      '(not given)',
      'true',
      'false',
    ]);
    const before = stack.upstream.requests.length;
    await page.fill('#f-arg-additionalInputs-path-orderId', 'F-7001');
    await page.selectOption('#f-arg-additionalInputs-query-verbose', 'true');
    // Enter in a field submits its form, as any form.
    await page.focus('#f-arg-additionalInputs-path-orderId');
    await page.keyboard.press('Enter');
    const result = page.locator('#dry-run-result');
    await result.locator('.request-line').waitFor();
    const args = JSON.parse(String(await result.locator('#form-arguments').textContent()));
    expect(args).toEqual({ additionalInputs: { 'path.orderId': 'F-7001', 'query.verbose': true } });
    const dir = await writeRepo(runsRepoFiles({ origin: stack.upstream.origin }));
    const cli = await runMt(
      [
        'extop-call',
        'get-order',
        '--repo',
        dir,
        '--args',
        JSON.stringify(args),
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
    expect(await result.locator('.request-line').textContent()).toBe(
      `${printed.request.method} ${printed.request.url}`,
    );
    expect(printed.request.url).toContain('/orders/F-7001?verbose=true');
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
    // A body from the form's fields: refund-order's amount (a number) and reason, sent nowhere.
    await page.goto(`${base}/console/tools/refund-order`);
    await page.fill('#f-arg-request-amount', '12.5');
    await page.fill('#f-arg-request-reason', 'Broken lamp');
    await page.fill('#f-arg-additionalInputs-path-orderId', 'F-7002');
    await page.click('button:text("Prepare these arguments without sending")');
    await result.locator('.request-line').waitFor();
    expect(await result.locator('.request-line').textContent()).toBe(
      `POST ${stack.upstream.origin}/orders/F-7002/refund`,
    );
    expect(JSON.parse(String(await result.locator('.json').textContent()))).toEqual({
      amount: 12.5,
      reason: 'Broken lamp',
    });
    expect(stack.upstream.requests.length).toBe(before);
    await page.close();
  });

  it("an interaction's page starts a run from a form of its inputs and opens the new run's page", async () => {
    const page = await admin.newPage();
    await page.goto(`${base}/console/interactions`);
    await Promise.all([page.waitForURL(/\/console\/interactions\/refund$/), page.click('a:text-is("refund")')]);
    // A prompt (text), a path binding (its parameter's type, string), a query binding (boolean), an auth input.
    expect(await page.locator('label[for="f-in-message"]').textContent()).toContain('required');
    expect(await page.locator('label[for="f-in-verbose"]').textContent()).toContain('(boolean)');
    expect(await page.locator('#f-in-shopKey-hint').textContent()).toContain('the id of a secret');
    await page.fill('#f-in-message', 'The lamp of order R-1 arrived broken.');
    await page.fill('#f-in-orderId', 'R-1');
    await page.selectOption('#f-in-verbose', 'true');
    await Promise.all([page.waitForURL(/\/console\/runs\/[0-9a-f-]{36}$/), page.click('button:text("Start the run")')]);
    const id = String(page.url().split('/').pop());
    started.push(id);
    const run = (await stack.api.request<RunView>('GET', `/v1/runs/${id}`)).body;
    expect(run.interaction.name).toBe('refund');
    expect(run.inputs).toEqual({ message: 'The lamp of order R-1 arrived broken.', orderId: 'R-1', verbose: true });
    expect(await page.locator('h1').textContent()).toContain('of refund');
    // A required input left empty: the engine's refusal next to the form, nothing started.
    const count = (await stack.api.request('GET', '/v1/runs?interaction=refund')).body.runs.length;
    await page.goto(`${base}/console/interactions/refund`);
    await page.evaluate(() => {
      for (const el of document.querySelectorAll('[required]')) el.removeAttribute('required');
    });
    await page.fill('#f-in-message', 'No order id');
    await page.click('button:text("Start the run")');
    expect(await page.locator('#start-error').textContent()).toContain('api:request:invalid');
    expect(await page.locator('#f-in-orderId-error').textContent()).toBe('orderId is required.');
    expect(await page.inputValue('#f-in-message')).toBe('No order id');
    expect((await stack.api.request('GET', '/v1/runs?interaction=refund')).body.runs.length).toBe(count);
    await page.close();
  });

  it('a conversation is started from its page and chatted with: the reply appears without a reload', async () => {
    const page = await admin.newPage();
    await page.goto(`${base}/console/interactions/chat`);
    await page.fill('#f-in-message', 'Hello, about my refund');
    await Promise.all([
      page.waitForURL(/\/console\/runs\/[0-9a-f-]{36}\/chat$/),
      page.click('button:text("Start and chat")'),
    ]);
    const id = String(page.url().split('/').at(-2));
    started.push(id);
    const steps = page.locator('#steps');
    await expect.poll(() => steps.textContent(), { timeout: 15_000 }).toContain('CHAT-1');
    await stack.api.waitForRun(id, (r) => r.status === 'WaitingForInput');
    const loads: string[] = [];
    page.on('load', () => loads.push(page.url()));
    // Keyboard only: type in the message field, Tab to Send, Enter.
    await page.focus('#chat-text');
    await page.keyboard.type('Where is my refund?');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await expect.poll(() => steps.textContent(), { timeout: 15_000 }).toContain('CHAT-2 Your refund is on its way.');
    expect(await steps.textContent()).toContain('Where is my refund?');
    expect(await page.inputValue('#chat-text')).toBe('');
    expect(loads).toEqual([]);
    const events = await stack.api.events(id);
    expect(events.filter((e) => e.type === 'user-message').map((e) => (e.data as { text: string }).text)).toEqual([
      'Where is my refund?',
    ]);
    // A conversation's run page links its chat.
    await page.goto(`${base}/console/runs/${id}`);
    await Promise.all([page.waitForURL(/\/chat$/), page.click('a:text-is("Chat with this conversation")')]);
    await page.close();
  });

  it('a knowledge base: a document uploaded and listed with its status, a search shows the passages REST returns', async () => {
    const page = await admin.newPage();
    await page.goto(`${base}/console/knowledge`);
    await Promise.all([page.waitForURL(/\/console\/knowledge\/[0-9a-f-]{36}$/), page.click('a:text-is("policies")')]);
    expect(await page.locator('#documents-heading + p').textContent()).toBe('No document yet.');
    await page.setInputFiles('#document', {
      name: 'refunds.md',
      mimeType: 'text/markdown',
      buffer: Buffer.from(
        '# Refunds\n\nRefunds are paid within 14 days of the return arriving.\n\n# Shipping\n\nParcels leave within two days.\n',
      ),
    });
    await Promise.all([page.waitForURL(/added=refunds\.md/), page.click('button:text("Upload")')]);
    expect(await page.locator('#kb-notice').textContent()).toBe('Added refunds.md.');
    const row = page.locator('#documents tbody tr', { hasText: 'refunds.md' });
    expect(await row.locator('td').nth(1).textContent()).toBe('text/markdown');
    expect(await row.locator('td').nth(4).textContent()).toBe('ready');
    const listed = await stack.api.request('GET', `/v1/knowledge-bases/${kbId}/documents`);
    expect(listed.body.documents ?? listed.body).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'refunds.md', status: 'ready' })]),
    );
    // The search, in the URL, shows the passages the REST search returns, in its order.
    await page.fill('#q', 'how long does a refund take');
    await Promise.all([page.waitForURL(/q=how/), page.keyboard.press('Enter')]);
    const shown = await page.locator('#search-results blockquote').allTextContents();
    const rest = await stack.api.request('POST', `/v1/knowledge-bases/${kbId}/search`, {
      query: 'how long does a refund take',
    });
    expect(rest.status).toBe(200);
    expect(shown).toEqual(rest.body.results.map((r: { text: string }) => r.text));
    expect(shown[0]).toContain('within 14 days');
    await page.reload();
    expect(await page.locator('#search-results blockquote').allTextContents()).toEqual(shown);
    await page.close();
  });

  it('an upload of a type the knowledge base does not take is refused with its code; a user key has no upload', async () => {
    const page = await admin.newPage();
    await page.goto(`${base}/console/knowledge/${kbId}`);
    await page.setInputFiles('#document', { name: 'logo.png', mimeType: 'image/png', buffer: Buffer.from('png') });
    await page.click('button:text("Upload")');
    expect(await page.locator('#kb-error').textContent()).toContain('api:knowledge:unsupported-type');
    expect(await page.locator('#documents tbody tr', { hasText: 'logo.png' }).count()).toBe(0);
    await page.close();
    const made = await stack.api.request<{ key: string }>('POST', '/v1/keys', { name: 'catalog-user', role: 'user' });
    expect(made.status).toBe(201);
    const context = await browser.newContext();
    const userPage = await context.newPage();
    await signIn(userPage, base, made.body.key);
    await userPage.goto(`${base}/console/knowledge/${kbId}`);
    expect(await userPage.locator('#document').count()).toBe(0);
    expect(await userPage.locator('#documents tbody tr', { hasText: 'refunds.md' }).count()).toBe(1);
    const token = await userPage.locator('input[name=_csrf]').first().getAttribute('value');
    const cookie = (await context.cookies()).find((c) => c.name === 'mt_console_session');
    const form = new FormData();
    form.set('_csrf', String(token));
    form.set('file', new Blob(['# Sneaky\n\nNo.\n'], { type: 'text/markdown' }), 'sneaky.md');
    const refused = await fetch(`${base}/console/knowledge/${kbId}/documents`, {
      method: 'POST',
      headers: { cookie: `mt_console_session=${cookie?.value}`, origin: base },
      body: form,
    });
    expect(refused.status).toBe(403);
    // Refused for its role, past the CSRF check (the token is read from the multipart form).
    expect(await refused.text()).toContain('api:auth:forbidden');
    const docs = await stack.api.request('GET', `/v1/knowledge-bases/${kbId}/documents`);
    expect(JSON.stringify(docs.body)).not.toContain('sneaky.md');
    await context.close();
  });

  it("a file system's folders and files are browsed, a text file shown", async () => {
    const page = await admin.newPage();
    await page.goto(`${base}/console/files`);
    await Promise.all([page.waitForURL(/\/console\/files\/[0-9a-f-]{36}$/), page.click('a:text-is("reports")')]);
    const names = () => page.locator('#folder tbody tr td:first-child').allTextContents();
    expect(await names()).toEqual(['reports/', 'readme.txt']);
    await Promise.all([page.waitForURL(/prefix=reports/), page.click('a:text-is("reports/")')]);
    expect(await names()).toEqual(['2026/', 'april.md']);
    await Promise.all([page.waitForURL(/prefix=reports%2F2026/), page.click('a:text-is("2026/")')]);
    expect(await names()).toEqual(['march.md']);
    await Promise.all([page.waitForURL(/\/file\?path=/), page.click('a:text-is("march.md")')]);
    expect(await page.locator('h1').textContent()).toBe('reports/2026/march.md');
    expect(await page.locator('.file-content pre').textContent()).toBe('# March\n\n41 orders refunded.\n');
    // The breadcrumbs go back up.
    await Promise.all([page.waitForURL(/prefix=reports%2F$/), page.click('.crumbs li:nth-child(2) a')]);
    expect(await names()).toEqual(['2026/', 'april.md']);
    await page.close();
  });

  describe('accessibility', () => {
    const pages: [string, () => string][] = [
      ['a tool with a diff and a dry run', () => '/console/tools/refund-order?from=1&to=2'],
      ['the interactions', () => '/console/interactions'],
      ['an interaction', () => '/console/interactions/refund'],
      ['the knowledge bases', () => '/console/knowledge'],
      ['a knowledge base with a search', () => `/console/knowledge/${kbId}?q=refund`],
      ['the file systems', () => '/console/files'],
      ['a folder', () => `/console/files/${fsId}?prefix=reports/`],
      ['a file', () => `/console/files/${fsId}/file?path=reports/april.md`],
    ];
    it.each(pages.flatMap(([name]) => (['light', 'dark'] as const).map((scheme) => [name, scheme] as const)))(
      '%s page (%s)',
      async (name, scheme) => {
        const page = await admin.newPage();
        await page.emulateMedia({ colorScheme: scheme });
        await page.goto(`${base}${pages.find(([n]) => n === name)?.[1]()}`);
        if (name.startsWith('a tool')) {
          await page.fill('#f-arg-request-amount', '1');
          await page.fill('#f-arg-request-reason', 'axe');
          await page.fill('#f-arg-additionalInputs-path-orderId', 'F-7100');
          await page.click('button:text("Prepare these arguments without sending")');
          await page.locator('#dry-run-result .request-line').waitFor();
        }
        await page.evaluate(() => {
          for (const d of document.querySelectorAll('details')) d.open = true;
        });
        if (scheme === 'light' && name.startsWith('a tool')) await screenshot(page, 'console-tool.png');
        if (scheme === 'light' && name.startsWith('a knowledge base')) await screenshot(page, 'console-knowledge.png');
        await expectAccessible(page);
        await page.close();
      },
    );

    it.each(['light', 'dark'] as const)('a chat page (%s)', async (scheme) => {
      const chats = (await stack.api.request('GET', '/v1/runs?interaction=chat')).body.runs as RunView[];
      expect(chats.length).toBeGreaterThan(0);
      const page = await admin.newPage();
      await page.emulateMedia({ colorScheme: scheme });
      await page.goto(`${base}/console/runs/${chats[0].id}/chat`);
      await page.locator('#steps li').first().waitFor();
      if (scheme === 'light') await screenshot(page, 'console-chat.png');
      await expectAccessible(page);
      await page.close();
    });

    it('every new page fits a 360 px wide screen without scrolling sideways', async () => {
      const context = await browser.newContext({ viewport: { width: 360, height: 780 } });
      const page = await context.newPage();
      await signIn(page, base, stack.adminKey);
      const widths: Record<string, number> = {};
      for (const [name, path] of pages) {
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
});
