import {
  applyDeploy,
  createNamespace,
  createPgDb,
  type Db,
  type DeployPlan,
  getVersion,
  migrate,
  planDeploy,
} from '@maitento/store';
import { createTestDatabase, type TestDatabase } from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dumpTables, sampleRepo, weatherConnector } from './fixtures.js';

let database: TestDatabase;
let db: Db;
let n = 0;

async function freshNamespace(): Promise<string> {
  const name = `ns-${++n}`;
  await createNamespace(db, name);
  return name;
}

function actions(plan: DeployPlan): Record<string, string> {
  return Object.fromEntries(plan.changes.map((c) => [`${c.kind}:${c.name}`, `${c.action}@${c.version}`]));
}

beforeAll(async () => {
  database = await createTestDatabase('mt_store_deploy', { migrated: true });
  db = createPgDb(database.url);
  await migrate(db);
});

afterAll(async () => {
  await db?.close();
  await database?.drop();
});

describe('deploy', () => {
  it('creates version 1 of everything, then a second deploy of the same repo changes nothing', async () => {
    const ns = await freshNamespace();
    const first = await applyDeploy(db, ns, sampleRepo());
    expect(first.applied).toBe(true);
    expect(first.changes.every((c) => c.action === 'create' && c.version === 1)).toBe(true);
    expect(first.changes).toHaveLength(7);
    const before = await dumpTables(db);
    const second = await applyDeploy(db, ns, sampleRepo());
    expect(second.changes.every((c) => c.action === 'unchanged' && c.version === 1)).toBe(true);
    expect(await dumpTables(db)).toEqual(before);
  });

  it('gives a changed connector, the tools that use it and what pins those new versions, and nothing else', async () => {
    const ns = await freshNamespace();
    await applyDeploy(db, ns, sampleRepo());
    const plan = await applyDeploy(db, ns, sampleRepo({ weather: { url: 'https://api.open-meteo.com/v2/forecast' } }));
    expect(actions(plan)).toEqual({
      'connector:open-meteo-forecast': 'update@2',
      'connector:orders-get': 'unchanged@1',
      'tool:current-weather': 'update@2',
      'tool:get-order': 'unchanged@1',
      'agent:weather-agent': 'update@2',
      'agent:support-agent': 'unchanged@1',
      'interaction:support': 'unchanged@1',
    });
    const connector = plan.changes.find((c) => c.name === 'open-meteo-forecast');
    expect(connector).toMatchObject({ previousVersion: 1, changed: ['url'], breaking: [] });
    const tool = plan.changes.find((c) => c.name === 'current-weather');
    expect(tool?.changed).toEqual(['connector open-meteo-forecast: version 1 → 2']);
    const stored = await getVersion(db, ns, 'tool', 'current-weather');
    expect(stored.pins).toEqual([{ kind: 'connector', name: 'open-meteo-forecast', version: 2 }]);
    const old = await getVersion(db, ns, 'tool', 'current-weather', 1);
    expect(old.pins).toEqual([{ kind: 'connector', name: 'open-meteo-forecast', version: 1 }]);
  });

  it('makes no version when only key order differs (the hash is of meaning, not text)', async () => {
    const ns = await freshNamespace();
    await applyDeploy(db, ns, sampleRepo());
    const repo = sampleRepo();
    const c = weatherConnector();
    // The same connector with its keys written in another order.
    repo.connectors[0] = Object.fromEntries(Object.entries(c).reverse()) as typeof c;
    const plan = await applyDeploy(db, ns, repo);
    expect(plan.changes.map((change) => change.action)).toEqual(Array(7).fill('unchanged'));
  });

  it('a dry run reports the plan a real deploy then carries out, and writes nothing', async () => {
    const ns = await freshNamespace();
    await applyDeploy(db, ns, sampleRepo());
    const before = await dumpTables(db);
    const next = sampleRepo({ weatherTool: { guidance: 'Weather, now.' } });
    const dry = await planDeploy(db, ns, next);
    expect(dry.applied).toBe(false);
    expect(await dumpTables(db)).toEqual(before);
    const real = await applyDeploy(db, ns, next);
    expect(real.changes).toEqual(dry.changes);
    expect(real.changes.find((c) => c.name === 'current-weather')?.changed).toContain('guidance changed');
  });

  it('a deploy that fails on its last write leaves every table exactly as it was', async () => {
    const ns = await freshNamespace();
    await applyDeploy(db, ns, sampleRepo());
    await db.exec(`
      CREATE FUNCTION mt_test_refuse() RETURNS trigger AS $$
      BEGIN
        IF NEW.kind = 'interaction' AND NEW.name = 'support' AND NEW.version = 2 THEN
          RAISE EXCEPTION 'refused by the test';
        END IF;
        RETURN NEW;
      END; $$ LANGUAGE plpgsql;
      CREATE TRIGGER mt_test_refuse BEFORE INSERT ON mt_resource_versions FOR EACH ROW EXECUTE FUNCTION mt_test_refuse();
    `);
    try {
      const before = await dumpTables(db);
      // The orders connector change reaches every kind: connector, tool, agent and, last, the interaction.
      const changed = sampleRepo({ orders: { url: 'https://orders.example.com/v2/orders/{orderId}' } });
      await expect(applyDeploy(db, ns, changed)).rejects.toThrow(/refused by the test/);
      expect(await dumpTables(db)).toEqual(before);
    } finally {
      await db.exec('DROP TRIGGER mt_test_refuse ON mt_resource_versions; DROP FUNCTION mt_test_refuse();');
    }
  });

  it('serialises two concurrent deploys: the result equals one applied after the other', async () => {
    const ns = await freshNamespace();
    await applyDeploy(db, ns, sampleRepo());
    const a = sampleRepo({ weather: { description: 'A' } });
    const b = sampleRepo({ weather: { description: 'B' }, orders: { description: 'B orders' } });
    const [planA, planB] = await Promise.all([applyDeploy(db, ns, a), applyDeploy(db, ns, b)]);
    const versionA = planA.changes.find((c) => c.name === 'open-meteo-forecast')!.version;
    const versionB = planB.changes.find((c) => c.name === 'open-meteo-forecast')!.version;
    // Each deploy saw the other's result or none of it: versions 2 and 3, never both 2.
    expect([versionA, versionB].sort()).toEqual([2, 3]);
    const last = versionA === 3 ? 'A' : 'B';
    const connector = await getVersion(db, ns, 'connector', 'open-meteo-forecast');
    expect(connector.resource.description).toBe(last);
    // Sequential replay on a second namespace gives the same latest contents.
    const replay = await freshNamespace();
    await applyDeploy(db, replay, sampleRepo());
    for (const repo of last === 'A' ? [b, a] : [a, b]) await applyDeploy(db, replay, repo);
    const { rows } = await db.query<{ namespace: string; kind: string; name: string; version: number; hash: string }>(
      'SELECT namespace, kind, name, version, hash FROM mt_resource_versions WHERE namespace IN ($1, $2) ' +
        'ORDER BY kind, name, version',
      [ns, replay],
    );
    const strip = (name: string) => rows.filter((r) => r.namespace === name).map(({ namespace: _, ...rest }) => rest);
    expect(strip(ns)).toEqual(strip(replay));
  });

  it('reports a removed parameter and a narrowed type as breaking, and a nullable new one as not', async () => {
    const ns = await freshNamespace();
    await applyDeploy(db, ns, sampleRepo());
    const next = sampleRepo({
      weatherTool: { requiresApproval: false, guidance: 'Gets the current weather for a place.' },
    });
    next.tools[0] = { ...next.tools[0], bindings: { request: {}, query: { current: 'wind' }, path: {} } };
    next.definitions.set('current-weather', {
      name: 'current-weather',
      description: 'Gets the current weather for a place.',
      parameters: {
        type: 'object',
        properties: {
          additionalInputs: {
            type: 'object',
            properties: { 'query.latitude': { type: 'integer' }, 'query.unit': { type: ['string', 'null'] } },
          },
        },
      },
    });
    const plan = await planDeploy(db, ns, next);
    const tool = plan.changes.find((c) => c.name === 'current-weather')!;
    expect(tool.action).toBe('update');
    expect(tool.changed).toEqual(
      expect.arrayContaining([
        'parameter removed: query.longitude',
        'parameter added: query.unit',
        'parameter type narrowed: query.latitude',
        'bindings.query',
      ]),
    );
    expect(tool.breaking.sort()).toEqual([
      'parameter removed: query.longitude',
      'parameter type narrowed: query.latitude',
    ]);
  });
});
