import { type CompiledRepo, compileRepo } from '@maitento/lang';
import {
  applyDeploy,
  createNamespace,
  createPgDb,
  createPgliteDb,
  type Db,
  getVersion,
  migrate,
  setVersionEnabled,
} from '@maitento/store';
import { createTestDatabase, type TestDatabase } from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Property names in an order jsonb would change: jsonb sorts keys by length, then bytewise.
const connectorText = `method = "POST"
url = "https://shop.example.com/orders"
description = "Places an order"
parameters.query = [ { name = "zone" }, { name = "a" } ]
schema.request = {
  type = "object"
  properties = {
    quantity = { type = "integer" description = "How many" }
    sku = { type = "string" }
    address = { type = "object" properties = { zip = { type = "string" } city = { type = "string" } } }
    b = { type = "boolean" }
  }
  required = ["sku"]
  additionalProperties = false
}
`;
const toolText = `connector = @ref("place-order")
guidance = "Places an order."
requiresApproval = true
`;

function compiled(): CompiledRepo {
  const repo = compileRepo([
    { path: 'connectors/open-api/place-order.mtr', content: connectorText },
    { path: 'external-operations/open-api/place-order.mtr', content: toolText },
  ]);
  expect(repo.diagnostics).toEqual([]);
  return repo;
}

async function checkOrder(db: Db, namespace: string): Promise<void> {
  const repo = compiled();
  await applyDeploy(db, namespace, repo);
  const tool = await getVersion(db, namespace, 'tool', 'place-order');
  const connector = await getVersion(db, namespace, 'connector', 'place-order');
  // Compared as text: toEqual ignores key order, the model does not.
  expect(JSON.stringify(tool.definition)).toBe(JSON.stringify(repo.definitions.get('place-order')));
  expect(JSON.stringify(tool.resource)).toBe(JSON.stringify(repo.tools[0]));
  expect(JSON.stringify(connector.resource)).toBe(JSON.stringify(repo.connectors[0]));
  expect(JSON.stringify(tool.pins)).toBe(JSON.stringify([{ kind: 'connector', name: 'place-order', version: 1 }]));

  // Only the order of two properties changed: a new version, stored in the new order, and it says why.
  const reordered = compileRepo([
    {
      path: 'connectors/open-api/place-order.mtr',
      content: connectorText
        .replace('    b = { type = "boolean" }\n', '')
        .replace('properties = {\n', 'properties = {\n    b = { type = "boolean" }\n'),
    },
    { path: 'external-operations/open-api/place-order.mtr', content: toolText },
  ]);
  const plan = await applyDeploy(db, namespace, reordered);
  expect(plan.changes.map((c) => [c.action, c.version, c.changed])).toEqual([
    ['update', 2, ['schema.request: key order']],
    ['update', 2, ['connector place-order: version 1 → 2']],
  ]);
  const second = await getVersion(db, namespace, 'tool', 'place-order');
  expect(JSON.stringify(second.definition)).toBe(JSON.stringify(reordered.definitions.get('place-order')));
  expect(
    Object.keys((second.definition!.parameters.properties as { request: { properties: object } }).request.properties),
  ).toEqual(['b', 'quantity', 'sku', 'address']);
  await applyDeploy(db, namespace, repo);

  // The same content again is no new version; enabled still flips; nothing else may change.
  const again = await applyDeploy(db, namespace, compiled());
  expect(again.changes.map((c) => c.action)).toEqual(['unchanged', 'unchanged']);
  await setVersionEnabled(db, namespace, 'tool', 'place-order', 3, false);
  expect((await getVersion(db, namespace, 'tool', 'place-order')).enabled).toBe(false);
  await expect(
    db.query(`UPDATE mt_resource_versions SET resource = '{"kind": "tool"}' WHERE namespace = $1 AND kind = 'tool'`, [
      namespace,
    ]),
  ).rejects.toThrow(/immutable/);
  await expect(
    db.query(
      `UPDATE mt_resource_versions SET definition = definition::jsonb::json WHERE namespace = $1 AND kind = 'tool'`,
      [namespace],
    ),
  ).rejects.toThrow(/immutable/);
}

describe('stored resources keep their key order', () => {
  let database: TestDatabase;
  let db: Db;

  beforeAll(async () => {
    database = await createTestDatabase('mt_store_order', { migrated: true });
    db = createPgDb(database.url);
    await migrate(db);
  });

  afterAll(async () => {
    await db?.close();
    await database?.drop();
  });

  it('on PostgreSQL: definition, resource and pins read back as deployed, key order included', async () => {
    await createNamespace(db, 'order-pg');
    await checkOrder(db, 'order-pg');
  });

  it('on PGlite: the same', { timeout: 90_000 }, async () => {
    const lite = await createPgliteDb();
    try {
      await migrate(lite);
      await createNamespace(lite, 'order-lite');
      await checkOrder(lite, 'order-lite');
    } finally {
      await lite.close();
    }
  });
});
