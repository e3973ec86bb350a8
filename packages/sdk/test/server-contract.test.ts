import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { readConfigRepo } from '@maitento/lang';
import { type RunningServer, startServer } from '@maitento/server';
import { createTestDatabase, type TestDatabase } from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AuthenticationError,
  ConflictError,
  type DeployFile,
  Maitento,
  NotFoundError,
  PermissionDeniedError,
  UnprocessableEntityError,
} from '../src/index.js';

// The SDK against the real server (listening on 127.0.0.1, real Postgres): every method's route and
// answer shape, and each typed error as the server really sends it.
const ADMIN_KEY = `mt_sdk_${randomBytes(16).toString('hex')}`;
let db: TestDatabase;
let server: RunningServer;
let mt: Maitento;
let files: DeployFile[];

beforeAll(async () => {
  db = await createTestDatabase('mt_sdk', { migrated: true });
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
  files = await readConfigRepo(fileURLToPath(new URL('../../../', import.meta.url)));
});

afterAll(async () => {
  await server?.close();
  await db?.drop();
});

describe('the SDK against the real server', () => {
  it('gets UnprocessableEntityError with diagnostics for a repo naming a missing secret', async () => {
    const error = await mt.deploy.create({ files }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnprocessableEntityError);
    expect(error).toMatchObject({ status: 422, code: 'api:deploy:invalid' });
    expect((error as UnprocessableEntityError).diagnostics.map((d) => d.code)).toContain('api:secrets:not-found');
  });

  it('creates, lists and rotates secrets, then deploys, plans a no-op and reads versions', async () => {
    const secret = await mt.secrets.create({ name: 'orders-api-key', value: 'v1' });
    expect(await mt.secrets.list()).toEqual([secret]);
    const rotated = await mt.secrets.rotate(secret.id, { value: 'v2' });
    expect(rotated).toMatchObject({ id: secret.id, name: 'orders-api-key' });
    const plan = await mt.deploy.create({ files });
    expect(plan.applied).toBe(true);
    const again = await mt.deploy.create({ files, dryRun: true });
    expect(again.applied).toBe(false);
    expect(again.changes.map((c) => c.action)).toEqual(plan.changes.map(() => 'unchanged'));
    expect(plan.changes.length).toBe(files.filter((f) => f.path.endsWith('.mtr')).length);
    const connector = await mt.connectors.get('orders-get-order', { version: 1 });
    expect(connector).toMatchObject({ name: 'orders-get-order', version: 1, resource: { method: 'GET' } });
    expect(await mt.connectors.get('orders-get-order')).toEqual(connector);
    const extop = await mt.extops.get('refund-order');
    expect(extop.definition.name).toBe('refund-order');
    // The version records the key that deployed it.
    const admin = (await mt.keys.list()).find((key) => key.role === 'admin')!;
    expect(await mt.extops.versions('refund-order')).toEqual([
      { version: 1, enabled: true, createdAt: extop.createdAt, deployedBy: admin.id },
    ]);
    expect((await mt.connectors.list()).map((c) => c.name)).toContain('open-meteo-forecast');
  });

  it('gets ConflictError when calling a disabled tool version, before any outbound call', async () => {
    await mt.extops.disableVersion('current-weather', 1);
    const error = await mt.extops
      .call('current-weather', { arguments: { additionalInputs: {} } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConflictError);
    expect(error).toMatchObject({ status: 409, code: 'api:extops:version-disabled' });
    expect(await mt.extops.enableVersion('current-weather', 1)).toEqual({
      name: 'current-weather',
      version: 1,
      enabled: true,
    });
  });

  it('sends an encoded name as one path segment, so it reaches the route and is not found', async () => {
    const error = await mt.connectors.versions('orders/get-order').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as NotFoundError).code).toBe('api:connectors:not-found');
  });

  it('maps a wrong key to AuthenticationError and a user key deploying to PermissionDeniedError', async () => {
    const wrong = new Maitento({ baseUrl: server.url, apiKey: 'mt_wrong', maxRetries: 0 });
    await expect(wrong.connectors.list()).rejects.toBeInstanceOf(AuthenticationError);
    const created = await mt.keys.create({ role: 'user', name: 'reader' });
    const reader = new Maitento({ baseUrl: server.url, apiKey: created.key, maxRetries: 0 });
    expect((await reader.extops.list()).length).toBeGreaterThan(0);
    const error = await reader.deploy.create({ files }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PermissionDeniedError);
    expect((error as PermissionDeniedError).status).toBe(403);
    expect((await mt.keys.list()).map((k) => k.id)).toContain(created.id);
    await mt.keys.delete(created.id);
    await expect(reader.extops.list()).rejects.toBeInstanceOf(AuthenticationError);
  });

  it("creates a namespace whose key sees none of the default namespace's records", async () => {
    const created = await mt.namespaces.create({ name: 'sdk-team' });
    expect(created).toMatchObject({ name: 'sdk-team', key: { role: 'admin' } });
    const other = new Maitento({ baseUrl: server.url, apiKey: created.key.key, maxRetries: 0 });
    expect(await other.connectors.list()).toEqual([]);
    await expect(other.connectors.get('orders-get-order')).rejects.toBeInstanceOf(NotFoundError);
    const secrets = await mt.secrets.list();
    await mt.secrets.delete(secrets[0].id);
    expect(await mt.secrets.list()).toEqual([]);
  });
});
