import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { readConfigRepo } from '@maitento/lang';
import { type RunningServer, startServer } from '@maitento/server';
import { createTestDatabase, type TestDatabase } from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Maitento, NotFoundError } from '../src/index.js';

// mt.agents and mt.interactions against the real server with the example repo deployed.
const ADMIN_KEY = `mt_sdk_ai_${randomBytes(16).toString('hex')}`;
let db: TestDatabase;
let server: RunningServer;
let mt: Maitento;

beforeAll(async () => {
  db = await createTestDatabase('mt_sdk_ai', { migrated: true });
  server = await startServer({
    port: 0,
    databaseUrl: db.url,
    secretKey: randomBytes(32).toString('hex'),
    bootstrapKey: ADMIN_KEY,
    // The example repo's handbook search and file tools call Maitento's own API at mt serve's default address.
    platformOrigin: 'http://127.0.0.1:8080',
    logger: false,
    message: () => {},
  });
  mt = new Maitento({ baseUrl: server.url, apiKey: ADMIN_KEY, maxRetries: 0 });
  await mt.secrets.create({ name: 'orders-api-key', value: 'v' });
  await mt.deploy.create({ files: await readConfigRepo(fileURLToPath(new URL('../../../', import.meta.url))) });
});

afterAll(async () => {
  await server?.close();
  await db?.drop();
});

describe('mt.agents and mt.interactions', () => {
  it('lists, gets and lists the versions of agents', async () => {
    expect((await mt.agents.list()).map((a) => a.name)).toEqual([
      'billing-agent',
      'handbook-assistant',
      'note-keeper',
      'order-checker',
      'support-agent',
      'triage-agent',
      'weather-assistant',
    ]);
    const agent = await mt.agents.get('support-agent');
    expect(agent).toMatchObject({ name: 'support-agent', version: 1, model: 'openai:gpt-4o-mini' });
    expect(agent.tools.map((t) => t.name)).toEqual(['get-order', 'refund-order']);
    expect(await mt.agents.get('support-agent', { version: 1 })).toEqual(agent);
    const admin = (await mt.keys.list()).find((key) => key.role === 'admin')!;
    expect(await mt.agents.versions('support-agent')).toEqual([
      { version: 1, enabled: true, createdAt: agent.createdAt, deployedBy: admin.id },
    ]);
  });

  it("gets an interaction with its inputs, its agent's pinned version and its tools", async () => {
    const interaction = await mt.interactions.get('ask-handbook');
    expect(interaction.agent).toEqual({ name: 'HandbookAssistant', agent: 'handbook-assistant', version: 1 });
    expect(interaction.inputs.map((i) => [i.name, i.kind, i.required])).toEqual([
      ['question', 'prompt', true],
      ['partitionId', 'binding', true],
    ]);
    expect(interaction.tools).toEqual([{ name: 'search-handbook', version: 1 }]);
    expect((await mt.interactions.list()).length).toBe(7);
    expect((await mt.interactions.versions('ask-handbook')).map((v) => v.version)).toEqual([1]);
  });

  it('rejects with NotFoundError keeping the server code', async () => {
    const error = await mt.interactions.get('nope', { version: 2 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as NotFoundError).code).toBe('api:interactions:not-found');
  });
});
