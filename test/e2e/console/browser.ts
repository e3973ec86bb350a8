import { existsSync } from 'node:fs';
import AxeBuilder from '@axe-core/playwright';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { type RunsStack, type RunsStackOptions, startRunsStack } from '../helpers/stack.js';
import { step } from '../helpers/steps.js';

/** Debian's Chromium, which `.ci/run` installs with apt-get when it is missing. */
export const CHROMIUM = '/usr/bin/chromium';

/**
 * Launches Debian's Chromium headless. Fails (never skips) with what to do when it is not installed: the console's
 * browser tests are part of CI.
 */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `The console's browser tests need Chromium at ${CHROMIUM}, which is missing: install Debian's package ` +
        '(`apt-get install -y chromium` as root; .ci/run does it in CI).',
    );
  }
  // A launch is bounded (playwright's default is 3 minutes, past a test file's 2-minute set-up) and checked: a page is
  // opened in it within 15 s (opening a context or a page has no deadline of its own). A browser that does not come up
  // or opens no page is closed and launched once more: the machine's trouble, not the console's (console set-ups ran
  // out of their minutes in CI twice, with every step of theirs but the browser's bounded).
  const launch = () =>
    chromium.launch({
      timeout: 20_000,
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  const working = async (browser: Browser): Promise<boolean> => {
    let timer: NodeJS.Timeout | undefined;
    const opened = (async () => {
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.setContent('<p>ready</p>');
      await context.close();
      return true;
    })().catch(() => false);
    const late = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), 15_000);
    });
    const ok = await Promise.race([opened, late]);
    clearTimeout(timer);
    return ok;
  };
  let failure: unknown;
  for (let attempt = 0; attempt < 2; attempt++) {
    const browser = await step(`Chromium launch ${attempt + 1}`, launch).catch((error: unknown) => {
      failure = error;
      return undefined;
    });
    if (browser === undefined) continue;
    if (await step(`Chromium opens a page ${attempt + 1}`, () => working(browser))) return browser;
    failure = new Error('Chromium started but opened no page within 15 s');
    await Promise.race([browser.close().catch(() => {}), new Promise((resolve) => setTimeout(resolve, 5_000))]);
  }
  throw failure;
}

/**
 * The runs stack (`startRunsStack(options)`) and Chromium, started at once (each takes seconds). When either fails,
 * the other is closed and the failure thrown.
 */
export async function startStackAndBrowser(options: RunsStackOptions): Promise<{ stack: RunsStack; browser: Browser }> {
  const [started, launched] = await Promise.allSettled([startRunsStack(options), launchChromium()]);
  if (started.status === 'fulfilled' && launched.status === 'fulfilled') {
    return { stack: started.value, browser: launched.value };
  }
  if (launched.status === 'fulfilled') await launched.value.close().catch(() => {});
  if (started.status === 'fulfilled') await started.value.close().catch(() => {});
  throw started.status === 'rejected' ? started.reason : (launched as PromiseRejectedResult).reason;
}

/** A browser context signed in on the console at `base` with `key` (its sign-in page closed again). */
export async function signedInContext(browser: Browser, base: string, key: string): Promise<BrowserContext> {
  const context = await step('browser context', () => browser.newContext());
  const page = await step('new page', () => context.newPage());
  await signIn(page, base, key);
  await page.close();
  return context;
}

/** Signs in on `/console/login` with `key` and waits for the page that follows. */
export async function signIn(page: Page, base: string, key: string): Promise<void> {
  await step('sign in: the login page', () => page.goto(`${base}/console/login`));
  await step('sign in: the key', () => page.fill('#key', key));
  await step('sign in: submit', () => Promise.all([page.waitForLoadState('load'), page.click('button[type=submit]')]));
}

/**
 * Runs axe-core on the page with the WCAG 2.2 AA tags and expects no violation (named with their nodes when any).
 * `resultTypes: ['violations']` is axe's own performance option: every rule still runs on every node, and violations
 * are reported whole; only the passes and the other groups are cut to one node each, which skips building their
 * selectors (most of a run's time on a page with many passing nodes). `options` first: it replaces what was set.
 */
export async function expectAccessible(page: Page): Promise<void> {
  const results = await new AxeBuilder({ page })
    .options({ resultTypes: ['violations'] })
    .withTags(['wcag2a', 'wcag2aa', 'wcag21aa', 'wcag22aa'])
    .analyze();
  const found = results.violations.map(
    (v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`,
  );
  expect(found, `axe on ${page.url()}`).toEqual([]);
}

/**
 * `npm run docs:console-screenshots` (MT_CONSOLE_SCREENSHOTS=1) saves the pictures of docs/console.md and the README
 * as the tests pass by: `file` in the light scheme and `file` with `-dark` before `.png` in the dark one.
 */
export async function screenshot(page: Page, file: string): Promise<void> {
  if (!process.env.MT_CONSOLE_SCREENSHOTS) return;
  await page.emulateMedia({ colorScheme: 'light' });
  await page.screenshot({ path: `docs/images/${file}`, fullPage: true });
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.screenshot({ path: `docs/images/${file.replace(/\.png$/, '-dark.png')}`, fullPage: true });
  await page.emulateMedia({ colorScheme: null });
}
