import { rm } from 'node:fs/promises';
import { readConfigRepo } from '@maitento/lang';
import { Maitento } from '@maitento/sdk';
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

// The real `mt` against a real `mt serve` with the example repo deployed: agents and interactions.
const ADMIN_KEY = `mt_cli_ai_${Date.now().toString(36)}_0123456789abcdef`;
let db: TestDatabase;
let home: string;
let server: ServeProcess;

function mt(args: string[]) {
  return runMt(args, { home, env: { MT_API_URL: server.url, MT_API_KEY: ADMIN_KEY } });
}

/** The id of the key that deployed: each version records it (docs/audit.md). */
let adminKeyId: string;

beforeAll(async () => {
  requireBuiltCli();
  db = await createTestDatabase('mt_cli_ai', { migrated: true });
  home = await tempHome();
  server = await startServer(db.url, ADMIN_KEY, home, { MT_PUBLIC_URL: EXAMPLE_PLATFORM_URL });
  const client = new Maitento({ baseUrl: server.url, apiKey: ADMIN_KEY, maxRetries: 0 });
  await client.secrets.create({ name: 'orders-api-key', value: 'v' });
  await client.deploy.create({ files: await readConfigRepo(ROOT) });
  adminKeyId = (await client.keys.list()).find((key) => key.role === 'admin')!.id;
});

afterAll(async () => {
  await server?.stop();
  await db?.drop();
  if (home) await rm(home, { recursive: true, force: true });
});

describe('mt agent-* and interaction-*', { timeout: 60_000 }, () => {
  it('lists agents and interactions as tables and as JSON', async () => {
    const agents = await mt(['agent-list']);
    expect(agents.code).toBe(0);
    expect(agents.stdout).toMatch(/^NAME\s+LATEST\s+ENABLED\n/);
    expect(agents.stdout).toMatch(/support-agent\s+1\s+yes/);
    const json = await mt(['interaction-list', '--json']);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout).map((i: { name: string }) => i.name)).toEqual([
      'ask-handbook',
      'check-refund',
      'keep-notes',
      'support-any-shop',
      'support-chat',
      'triage',
      'weather',
    ]);
  });

  it('shows an agent with its model, tools and instructions', async () => {
    const result = await mt(['agent-get', 'support-agent']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/model\s+openai:gpt-4o-mini/);
    expect(result.stdout).toMatch(/tools\s+get-order \(version 1\), refund-order \(version 1\)/);
    expect(result.stdout).toContain('Instructions:\nYou are the support desk');
    const json = JSON.parse((await mt(['agent-get', 'support-agent', '--version', '1', '--json'])).stdout);
    expect(json).toMatchObject({ name: 'support-agent', version: 1, model: 'openai:gpt-4o-mini' });
    const versions = JSON.parse((await mt(['agent-versions', 'support-agent', '--json'])).stdout);
    expect(versions).toEqual([{ version: 1, enabled: true, createdAt: json.createdAt, deployedBy: adminKeyId }]);
  });

  it('shows an interaction with each input, whether it is required, its default and where it goes', async () => {
    const result = await mt(['interaction-get', 'weather']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/agent\s+Weather: weather-assistant \(version 1\)/);
    expect(result.stdout).toContain('Task:\nWhat is the weather like now in %%place%%?');
    expect(result.stdout).toMatch(/place\s+prompt\s+yes\s+-\s+fills %%place%% in the task/);
    expect(result.stdout).toMatch(
      /temperatureUnit\s+binding\s+no\s+"celsius"\s+query\.temperature_unit of current-weather of weather-assistant/,
    );
    const shop = JSON.parse((await mt(['interaction-get', 'support-any-shop', '--json'])).stdout);
    expect(shop.inputs.find((i: { name: string }) => i.name === 'shopKey')).toMatchObject({
      kind: 'auth',
      required: true,
      header: 'X-Api-Key',
    });
    const versions = await mt(['interaction-versions', 'weather']);
    expect(versions.stdout).toMatch(
      new RegExp(`^VERSION\\s+ENABLED\\s+CREATED\\s+DEPLOYED BY\\n1\\s+yes\\s+\\S+\\s+${adminKeyId}\\n`),
    );
  });

  it('exits 1 with the code for an unknown interaction or agent, and 2 for a bad --version', async () => {
    const missing = await mt(['interaction-get', 'nope']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('error [api:interactions:not-found]');
    const json = await mt(['agent-get', 'nope', '--json']);
    expect([json.code, JSON.parse(json.stdout).code]).toEqual([1, 'api:agents:not-found']);
    expect((await mt(['interaction-get', 'weather', '--version', 'x'])).code).toBe(2);
  });
});
