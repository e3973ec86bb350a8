import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, type TestDatabase } from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  EXAMPLE_PLATFORM_URL,
  ROOT,
  requireBuiltCli,
  runMt,
  type ServeProcess,
  startServer,
  tempHome,
} from '../../../test/e2e/support/harness.js';

// The real `mt` against a real `mt serve`: one version of a tool or connector by number, and whether a tool
// can be called while the connector version it is pinned to is disabled.
const ADMIN_KEY = `mt_cli_extops_${Date.now().toString(36)}_0123456789abcdef`;
let db: TestDatabase;
let home: string;
let repo: string;
let server: ServeProcess;

function mt(args: string[]) {
  return runMt(args, {
    home,
    env: { MT_API_URL: server.url, MT_API_KEY: ADMIN_KEY, MT_PUBLIC_URL: EXAMPLE_PLATFORM_URL },
  });
}

beforeAll(async () => {
  requireBuiltCli();
  db = await createTestDatabase('mt_cli_extops', { migrated: true });
  home = await tempHome();
  repo = await mkdtemp(join(tmpdir(), 'mt-cli-extops-'));
  for (const folder of ['connectors', 'external-operations']) {
    await cp(join(ROOT, folder), join(repo, folder), { recursive: true });
  }
  server = await startServer(db.url, ADMIN_KEY, home, { MT_PUBLIC_URL: EXAMPLE_PLATFORM_URL });
  expect((await mt(['secret-create', 'orders-api-key', '--value', 'v'])).code).toBe(0);
  expect((await mt(['deploy', repo])).code).toBe(0);
  // A second version of the tool, with other guidance.
  const file = join(repo, 'external-operations/open-api/get-order.mtr');
  const text = await readFile(file, 'utf8');
  await writeFile(file, text.replace(/^guidance = ".*"$/m, 'guidance = "Version two."'));
  const second = await mt(['deploy', repo]);
  expect(second.code, second.stderr).toBe(0);
});

afterAll(async () => {
  await server?.stop();
  await db?.drop();
  for (const dir of [home, repo]) if (dir) await rm(dir, { recursive: true, force: true });
});

describe('mt extop-get and mt connector-get --version', { timeout: 60_000 }, () => {
  it('shows the version named, not the latest', async () => {
    const first = await mt(['extop-get', 'get-order', '--version', '1', '--json']);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ name: 'get-order', version: 1 });
    expect(JSON.parse(first.stdout).definition.description).not.toBe('Version two.');
    const latest = JSON.parse((await mt(['extop-get', 'get-order', '--json'])).stdout);
    expect(latest).toMatchObject({ version: 2, definition: { description: 'Version two.' } });
    const table = await mt(['extop-get', 'get-order', '--version', '1']);
    expect(table.stdout).toMatch(/version\s+1\n/);
    const connector = await mt(['connector-get', 'orders-get-order', '--version', '1', '--json']);
    expect(JSON.parse(connector.stdout)).toMatchObject({ name: 'orders-get-order', version: 1 });
    const missing = await mt(['extop-get', 'get-order', '--version', '9']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('api:extops:not-found');
  });
});

describe('mt extop-list', { timeout: 60_000 }, () => {
  it('shows a tool as not callable, and why, while its pinned connector version is disabled', async () => {
    const before = await mt(['extop-list']);
    expect(before.stdout).toMatch(/^NAME\s+LATEST\s+ENABLED\s+CALLABLE\n/);
    expect(before.stdout).toMatch(/get-order\s+2\s+yes\s+yes\n/);

    expect((await mt(['connector-version-disable', 'orders-get-order', '1'])).code).toBe(0);
    const after = await mt(['extop-list']);
    expect(after.stdout).toMatch(/get-order\s+2\s+yes\s+no: connector orders-get-order version 1 is disabled\n/);
    const json = JSON.parse((await mt(['extop-list', '--json'])).stdout);
    expect(json).toContainEqual({
      name: 'get-order',
      latestVersion: 2,
      enabled: true,
      callable: false,
      reason: 'connector orders-get-order version 1 is disabled',
    });
    expect((await mt(['connector-version-enable', 'orders-get-order', '1'])).code).toBe(0);
  });
});
