import { randomUUID } from 'node:crypto';
import {
  type AuditContext,
  applyDeploy,
  type CompiledResources,
  createNamespace,
  createPgDb,
  type Db,
  deleteResource,
  deploy,
  getAnyVersion,
  getVersion,
  insertRun,
  listAudit,
  listResources,
  listTools,
  listVersions,
  migrate,
  versionNotFound,
} from '@maitento/store';
import { createTestDatabase, type TestDatabase } from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dumpTables, sampleRepo } from './fixtures.js';

// Deleting resources (decision 0295): `deploy` with `prune`, and `deleteResource` behind the DELETE routes.

let database: TestDatabase;
let db: Db;
let n = 0;

const AUDIT: AuditContext = { actor: { kind: 'key', keyId: 'k-1', role: 'admin', via: 'api' }, requestId: null };

async function freshNamespace(): Promise<string> {
  const name = `del-${++n}`;
  await createNamespace(db, name);
  return name;
}

/** The sample repo without the weather agent, its tool and its connector. */
function withoutWeather(): CompiledResources {
  const repo = sampleRepo();
  return {
    ...repo,
    connectors: repo.connectors.filter((c) => c.name !== 'open-meteo-forecast'),
    tools: repo.tools.filter((t) => t.name !== 'current-weather'),
    agents: repo.agents.filter((a) => a.name !== 'weather-agent'),
  };
}

/** A run of `support` that has not ended, pinning what `support` pins (and `extra`). */
async function waitingRun(ns: string, extra: { kind: string; name: string; version: number }[] = []) {
  const id = randomUUID();
  await insertRun(
    db,
    {
      id,
      namespace: ns,
      interaction: 'support',
      interactionVersion: 1,
      versions: [
        { kind: 'interaction', name: 'support', version: 1 },
        { kind: 'agent', name: 'support-agent', version: 1 },
        { kind: 'tool', name: 'get-order', version: 1 },
        { kind: 'connector', name: 'orders-get', version: 1 },
        ...extra,
      ] as never,
      inputs: { message: 'hi' },
      interactive: true,
    },
    { type: 'run-started', data: {} },
  );
  await db.query("UPDATE mt_runs SET status = 'PendingApproval' WHERE id = $1", [id]);
  return id;
}

const end = (id: string) => db.query("UPDATE mt_runs SET status = 'Completed' WHERE id = $1", [id]);

beforeAll(async () => {
  database = await createTestDatabase('mt_store_delete', { migrated: true });
  db = createPgDb(database.url);
  await migrate(db);
});

afterAll(async () => {
  await db?.close();
  await database?.drop();
});

describe('deploy without prune', () => {
  it('lists what the repo no longer holds as absent and changes nothing', async () => {
    const ns = await freshNamespace();
    await applyDeploy(db, ns, sampleRepo());
    const before = await dumpTables(db);
    const plan = await deploy(db, ns, withoutWeather());
    expect(plan.changes.some((c) => c.action === 'delete')).toBe(false);
    expect(plan.absent).toEqual([
      { kind: 'agent', name: 'weather-agent', version: 1 },
      { kind: 'connector', name: 'open-meteo-forecast', version: 1 },
      { kind: 'tool', name: 'current-weather', version: 1 },
    ]);
    expect(await dumpTables(db)).toEqual(before);
    expect((await listTools(db, ns)).map((t) => t.name)).toEqual(['current-weather', 'get-order']);
  });
});

describe('deploy with prune', () => {
  it('plans the deletions on a dry run, then hides and disables what left the repo', async () => {
    const ns = await freshNamespace();
    await applyDeploy(db, ns, sampleRepo());
    const before = await dumpTables(db);
    const dry = await deploy(db, ns, withoutWeather(), { dryRun: true, prune: true });
    expect(dry.changes.filter((c) => c.action === 'delete').map((c) => `${c.kind}:${c.name}@${c.version}`)).toEqual([
      'agent:weather-agent@1',
      'connector:open-meteo-forecast@1',
      'tool:current-weather@1',
    ]);
    expect(dry.absent).toBeUndefined();
    expect(await dumpTables(db)).toEqual(before);

    const plan = await deploy(db, ns, withoutWeather(), { prune: true, audit: AUDIT });
    expect(plan.applied).toBe(true);
    expect(plan.changes.filter((c) => c.action === 'delete')).toHaveLength(3);
    expect((await listTools(db, ns)).map((t) => t.name)).toEqual(['get-order']);
    expect((await listResources(db, ns, 'connector')).map((c) => c.name)).toEqual(['orders-get']);
    expect((await listResources(db, ns, 'agent')).map((c) => c.name)).toEqual(['support-agent']);
    await expect(getVersion(db, ns, 'tool', 'current-weather')).rejects.toMatchObject({ code: 'api:extops:not-found' });
    await expect(getVersion(db, ns, 'tool', 'current-weather', 1)).rejects.toMatchObject({
      code: 'api:extops:not-found',
    });
    await expect(listVersions(db, ns, 'tool', 'current-weather')).rejects.toMatchObject({
      code: 'api:extops:not-found',
    });
    // What a run pinned stays readable by its number, disabled; there is no latest.
    expect(await getAnyVersion(db, ns, 'tool', 'current-weather')).toBeUndefined();
    expect(await getAnyVersion(db, ns, 'tool', 'current-weather', 1)).toMatchObject({ version: 1, enabled: false });
    // The deploy's audit row names the deletions.
    const [row] = (await listAudit(db, ns, { action: 'deploy.applied' })).entries;
    expect((row!.after as { versions: { action: string }[] }).versions.map((v) => v.action)).toEqual([
      'delete',
      'delete',
      'delete',
    ]);

    // Deployed again, each is created anew, numbered after the deletion.
    const again = await deploy(db, ns, sampleRepo(), { prune: true });
    const created = again.changes.filter((c) => c.action === 'create').map((c) => `${c.kind}:${c.name}@${c.version}`);
    expect(created).toEqual(['connector:open-meteo-forecast@3', 'tool:current-weather@3', 'agent:weather-agent@3']);
    expect((await listVersions(db, ns, 'tool', 'current-weather')).map((v) => v.version)).toEqual([3, 1]);
  });

  it('keeps the versions a run not yet ended pins enabled, and names the run', async () => {
    const ns = await freshNamespace();
    await applyDeploy(db, ns, sampleRepo());
    const run = await waitingRun(ns, [{ kind: 'tool', name: 'current-weather', version: 1 }]);
    const plan = await deploy(db, ns, withoutWeather(), { prune: true });
    const tool = plan.changes.find((c) => c.name === 'current-weather');
    expect(tool).toMatchObject({ action: 'delete', pinnedBy: [run] });
    expect(plan.changes.find((c) => c.name === 'weather-agent')?.pinnedBy).toBeUndefined();
    expect(await getAnyVersion(db, ns, 'tool', 'current-weather', 1)).toMatchObject({ enabled: true });
    expect(await getAnyVersion(db, ns, 'agent', 'weather-agent', 1)).toMatchObject({ enabled: false });
    expect((await listTools(db, ns)).map((t) => t.name)).toEqual(['get-order']);
  });

  it('changes nothing when the deploy fails: a resource kept that references one pruned', async () => {
    const ns = await freshNamespace();
    await applyDeploy(db, ns, sampleRepo());
    const before = await dumpTables(db);
    const repo = sampleRepo();
    // The weather agent stays, its tool goes: the reference is to nothing.
    const broken = { ...repo, tools: repo.tools.filter((t) => t.name !== 'current-weather') };
    await expect(deploy(db, ns, broken, { prune: true })).rejects.toMatchObject({
      code: 'api:deploy:reference-missing',
    });
    expect(await dumpTables(db)).toEqual(before);
  });
});

describe('deleteResource', () => {
  const notFound = { notFound: versionNotFound('tool') };

  it('refuses while a run not yet ended pins it, naming the run, and deletes once the run ended', async () => {
    const ns = await freshNamespace();
    await applyDeploy(db, ns, sampleRepo());
    const run = await waitingRun(ns);
    const before = await dumpTables(db);
    const refused = deleteResource(db, ns, 'interaction', 'support', {
      notFound: versionNotFound('tool'),
      audit: AUDIT,
    });
    await expect(refused).rejects.toMatchObject({ code: 'api:resources:pinned', status: 409 });
    await expect(refused).rejects.toThrow(run);
    expect(await dumpTables(db)).toEqual(before);
    await end(run);
    expect(await deleteResource(db, ns, 'interaction', 'support', { ...notFound, audit: AUDIT })).toEqual({
      kind: 'interaction',
      name: 'support',
      version: 1,
    });
    expect(await listResources(db, ns, 'interaction')).toEqual([]);
    const [row] = (await listAudit(db, ns, { action: 'resource.deleted' })).entries;
    expect(row).toMatchObject({ target: { kind: 'interaction', id: 'support' }, before: { version: 1 } });
    // Deleted twice: not there.
    await expect(deleteResource(db, ns, 'interaction', 'support', notFound)).rejects.toMatchObject({
      code: 'api:extops:not-found',
    });
  });

  it('refuses an auth provider pinned through the connector a waiting run pins', async () => {
    const ns = await freshNamespace();
    const repo = sampleRepo();
    await applyDeploy(db, ns, {
      ...repo,
      authProviders: [
        {
          kind: 'auth-provider',
          name: 'orders-idp',
          authorizationUrl: 'https://idp.example.com/authorize',
          tokenUrl: 'https://idp.example.com/token',
          clientId: 'c',
          scopes: [],
        } as never,
      ],
      connectors: repo.connectors.map((c) => (c.name === 'orders-get' ? { ...c, provider: 'orders-idp' } : c)),
    });
    const connector = await getVersion(db, ns, 'connector', 'orders-get');
    expect(connector.pins).toEqual([{ kind: 'auth-provider', name: 'orders-idp', version: 1 }]);
    const run = await waitingRun(ns);
    await db.query('UPDATE mt_runs SET versions = $2 WHERE id = $1', [
      run,
      JSON.stringify([{ kind: 'connector', name: 'orders-get', version: connector.version }]),
    ]);
    await expect(
      deleteResource(db, ns, 'auth-provider', 'orders-idp', { notFound: versionNotFound('auth-provider') }),
    ).rejects.toMatchObject({ code: 'api:resources:pinned' });
  });

  it('refuses while the latest version of another resource pins it; a deploy referencing it then fails', async () => {
    const ns = await freshNamespace();
    await applyDeploy(db, ns, sampleRepo());
    await expect(deleteResource(db, ns, 'tool', 'current-weather', notFound)).rejects.toMatchObject({
      code: 'api:resources:referenced',
      message: expect.stringContaining('agent weather-agent'),
    });
    await deleteResource(db, ns, 'agent', 'weather-agent', notFound);
    await deleteResource(db, ns, 'tool', 'current-weather', notFound);
    expect((await listTools(db, ns)).map((t) => t.name)).toEqual(['get-order']);
    // A deploy of the agent alone: its reference names a deleted tool.
    const repo = sampleRepo();
    const agentOnly = {
      connectors: [],
      tools: [],
      agents: repo.agents.filter((a) => a.name === 'weather-agent'),
      interactions: [],
      definitions: new Map(),
    };
    await expect(applyDeploy(db, ns, agentOnly)).rejects.toMatchObject({ code: 'api:deploy:reference-missing' });
  });
});
