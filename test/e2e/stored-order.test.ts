import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, type TestDatabase } from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireBuiltCli, runMt, type ServeProcess, startServer, tempHome } from './support/harness.js';

// A tool whose definition lists properties in an order jsonb would change (it sorts keys by length, then
// bytewise): deployed by the real `mt deploy` to a real `mt serve`, then read back by the CLI and the REST API.
const ADMIN_KEY = `mt_order_${Date.now().toString(36)}_0123456789abcdef`;
const CONNECTOR = `method = "POST"
url = "https://shop.example.com/orders"
description = "Places an order"
parameters.query = [ { name = "zone" description = "Where" }, { name = "a" type = "integer" } ]
schema.request = {
  type = "object"
  properties = {
    quantity = { type = "integer" description = "How many" minimum = 1 }
    sku = { type = "string" }
    address = { type = "object" properties = { zip = { type = "string" } city = { type = "string" } } }
    b = { type = "boolean" }
  }
  required = ["sku"]
  additionalProperties = false
}
`;
const TOOL = `connector = @ref("place-order")
guidance = "Places an order."
`;

let db: TestDatabase;
let home: string;
let repo: string;
let server: ServeProcess;

function mt(args: string[]) {
  return runMt(args, { home, env: { MT_API_URL: server.url, MT_API_KEY: ADMIN_KEY } });
}

/** The JSON text after `marker` in `text` (the CLI's human output ends with the definition). */
function jsonAfter(text: string, marker: string): string {
  const at = text.indexOf(marker);
  expect(at, text).toBeGreaterThanOrEqual(0);
  return text.slice(at + marker.length).trim();
}

beforeAll(async () => {
  requireBuiltCli();
  db = await createTestDatabase('mt_e2e_order', { migrated: true });
  home = await tempHome();
  repo = await mkdtemp(join(tmpdir(), 'mt-order-repo-'));
  await mkdir(join(repo, 'connectors/open-api'), { recursive: true });
  await mkdir(join(repo, 'external-operations/open-api'), { recursive: true });
  await writeFile(join(repo, 'connectors/open-api/place-order.mtr'), CONNECTOR);
  await writeFile(join(repo, 'external-operations/open-api/place-order.mtr'), TOOL);
  server = await startServer(db.url, ADMIN_KEY, home);
  const deployed = await mt(['deploy', repo]);
  expect(deployed.code, deployed.stderr).toBe(0);
});

afterAll(async () => {
  await server?.stop();
  await db?.drop();
  for (const dir of [home, repo]) if (dir) await rm(dir, { recursive: true, force: true });
});

describe('a deployed tool reads back in the order it was compiled', { timeout: 60_000 }, () => {
  it('mt extop-get gives the definition of mt check --tools, as JSON and as text, key order included', async () => {
    const checked = await mt(['check', repo, '--tools', '--json']);
    expect(checked.code, checked.stderr).toBe(0);
    const compiled = (JSON.parse(checked.stdout).tools as { name: string }[]).find((t) => t.name === 'place-order');
    // Key order is not what toEqual compares, so the texts are compared.
    const got = await mt(['extop-get', 'place-order', '--json']);
    expect(got.code, got.stderr).toBe(0);
    expect(JSON.stringify(JSON.parse(got.stdout).definition)).toBe(JSON.stringify(compiled));
    expect(JSON.stringify(compiled)).toMatch(/"properties":\{"quantity":.*"sku":.*"address":\{.*"zip":.*"city":.*"b":/);

    const text = await mt(['check', repo, '--tools']);
    const shown = await mt(['extop-get', 'place-order']);
    expect(jsonAfter(shown.stdout, 'What the model sees:\n')).toBe(jsonAfter(text.stdout, 'place-order\n'));
  });

  it('the REST API answers the same definition and the connector schema in the order deployed', async () => {
    const checked = JSON.parse((await mt(['check', repo, '--tools', '--json'])).stdout);
    const headers = { authorization: `Bearer ${ADMIN_KEY}` };
    const extop = JSON.parse(await (await fetch(`${server.url}/v1/extops/place-order`, { headers })).text());
    expect(JSON.stringify(extop.definition)).toBe(JSON.stringify(checked.tools[0]));
    const connector = JSON.parse(await (await fetch(`${server.url}/v1/connectors/place-order`, { headers })).text());
    expect(Object.keys(connector.resource.schema.request.properties)).toEqual(['quantity', 'sku', 'address', 'b']);
    expect(Object.keys(connector.resource.schema.request.properties.quantity)).toEqual([
      'type',
      'description',
      'minimum',
    ]);
    const cli = JSON.parse((await mt(['connector-get', 'place-order', '--json'])).stdout);
    expect(JSON.stringify(cli.resource.schema)).toBe(JSON.stringify(connector.resource.schema));
  });
});
