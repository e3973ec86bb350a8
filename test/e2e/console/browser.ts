import { existsSync } from 'node:fs';
import AxeBuilder from '@axe-core/playwright';
import { type Browser, chromium, type Page } from 'playwright-core';
import { expect } from 'vitest';

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
  return chromium.launch({
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
}

/** Signs in on `/console/login` with `key` and waits for the page that follows. */
export async function signIn(page: Page, base: string, key: string): Promise<void> {
  await page.goto(`${base}/console/login`);
  await page.fill('#key', key);
  await Promise.all([page.waitForLoadState('load'), page.click('button[type=submit]')]);
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
