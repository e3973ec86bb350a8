import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createPgDb, type Db, loadMigrations } from '@maitento/store';
import { createTestDatabase, type TestDatabase } from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServeProcess, startServe } from './helpers/processes.js';
import { copyExampleRepo, type RunOptions, requireBuiltCli, runMt, tempHome } from './support/harness.js';

// Several real `mt serve` processes on one fresh PostgreSQL database, driven by the real `mt deploy`
// on copies of the example repo: start-up races, hashing by meaning, the pinning chain, atomicity and
// concurrent deploys.
const SECRET_KEY = 'b'.repeat(64);
let database: TestDatabase;
let db: Db;
let home: string;
// The example handbook search calls Maitento's own API (auth = "Maitento") at mt serve's default address.
const PLATFORM = 'http://127.0.0.1:8080';
let servers: ServeProcess[] = [];
let adminKey: string;
let repo: string;
const temp: string[] = [];

interface Change {
  kind: string;
  name: string;
  action: string;
  version: number;
  breaking: string[];
  changed?: string[];
}

function mt(args: string[], server: ServeProcess, options: RunOptions = {}) {
  return runMt(args, {
    home,
    ...options,
    env: { MT_API_URL: server.url, MT_API_KEY: adminKey, MT_PUBLIC_URL: PLATFORM, ...options.env },
  });
}

async function plan(dir: string, server = servers[0], dryRun = true): Promise<Change[]> {
  const result = await mt(['deploy', dir, '--json', ...(dryRun ? ['--dry-run'] : [])], server);
  expect(result.code, result.stderr + result.stdout).toBe(0);
  return JSON.parse(result.stdout).changes;
}

function updated(changes: Change[]): string[] {
  return changes
    .filter((c) => c.action !== 'unchanged')
    .map((c) => `${c.kind}:${c.name}`)
    .sort();
}

/** A copy of the example repo with `edit` applied to the text of the file at `path`. */
async function variant(edits: Record<string, (text: string) => string>): Promise<string> {
  const dir = await copyExampleRepo();
  temp.push(dir);
  for (const [path, edit] of Object.entries(edits)) {
    const file = join(dir, path);
    const before = await readFile(file, 'utf8');
    const after = edit(before);
    expect(after, `${path} was not changed by the edit`).not.toBe(before);
    await writeFile(file, after);
  }
  return dir;
}

async function mtrFiles(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true })).filter((f) => f.endsWith('.mtr')).sort();
}

async function dumpTables(): Promise<unknown> {
  const out: Record<string, unknown> = {};
  for (const table of ['mt_namespaces', 'mt_api_keys', 'mt_secrets', 'mt_resource_versions', 'mt_migrations']) {
    out[table] = (await db.query(`SELECT to_jsonb(t) AS row FROM ${table} t ORDER BY to_jsonb(t)::text`)).rows;
  }
  return out;
}

beforeAll(async () => {
  requireBuiltCli();
  database = await createTestDatabase('mt_e2e_chain');
  db = createPgDb(database.url);
  home = await tempHome();
  // Four servers start at once on the empty database: one migration, one first key, all listening.
  const env = { DATABASE_URL: database.url, MT_SECRET_KEY: SECRET_KEY, MT_PUBLIC_URL: PLATFORM };
  servers = await Promise.all([1, 2, 3, 4].map(() => startServe(home, env)));
  const announced = servers.map((s) => /first admin key \(shown once, keep it\):\n\s+(mt_\S+)/.exec(s.log())?.[1]);
  expect(announced.filter(Boolean)).toHaveLength(1);
  adminKey = announced.find(Boolean)!;
  repo = await copyExampleRepo();
  temp.push(repo);
  // Set-up, not what this file tests (remote.test.ts tests `mt secret-create`): through the REST API, not a `mt` process.
  const secret = await fetch(`${servers[1].url}/v1/secrets`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'orders-api-key', value: 'chain-secret-value' }),
  });
  expect(secret.status, await secret.text()).toBe(201);
  expect((await plan(repo, servers[2], false)).map((c) => c.action)).toEqual(
    (await mtrFiles(repo)).map(() => 'create'),
  );
}, 120_000);

afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  await db?.close();
  await database?.drop();
  for (const dir of [home, ...temp]) if (dir) await rm(dir, { recursive: true, force: true });
});

describe('several mt serve processes on one database', { timeout: 120_000 }, () => {
  it('started at once, migrated once and made one first key that every one of them accepts', async () => {
    const { rows } = await db.query<{ version: number }>('SELECT version FROM mt_migrations ORDER BY version');
    expect(rows).toEqual(loadMigrations().map((m) => ({ version: m.version })));
    expect((await db.query('SELECT 1 FROM mt_api_keys')).rows).toHaveLength(1);
    // Each server answers an authenticated request with the one key (REST: the key is what this asserts, not `mt`).
    for (const server of servers) {
      const listed = await fetch(`${server.url}/v1/connectors`, { headers: { authorization: `Bearer ${adminKey}` } });
      expect([server.url, listed.status]).toEqual([server.url, 200]);
      await listed.arrayBuffer();
    }
  });
});

describe('hashing by meaning', { timeout: 120_000 }, () => {
  it('makes no version for comments, blank lines, indentation, spacing and key order in every file', async () => {
    const edits: Record<string, (text: string) => string> = {};
    for (const file of await mtrFiles(repo)) {
      edits[file] = (text) => {
        const lines = text
          .split('\n')
          .map((line) => line.replace(/^( +)/, '$1$1').replace(/^(\s*[\w.]+) = /, '$1   =   '));
        // Swap the first two adjacent single-line top-level assignments: another key order.
        const single = /^[\w.]+\s+=\s+("[^"]*"|true|false|-?\d+(\.\d+)?)$/;
        const at = lines.findIndex((line, i) => single.test(line) && single.test(lines[i + 1] ?? ''));
        if (at >= 0) [lines[at], lines[at + 1]] = [lines[at + 1], lines[at]];
        return `// reformatted by the test\n\n${lines.join('\n\n')}\n// the end\n`;
      };
    }
    const changes = await plan(await variant(edits));
    expect(changes).toHaveLength((await mtrFiles(repo)).length);
    expect(updated(changes)).toEqual([]);
  });
});

describe('a changed connector pins new versions all the way up', { timeout: 120_000 }, () => {
  const url = (text: string) => text.replace(/^url = "(.*)"$/m, 'url = "$1/v2"');
  const cases: [string, string[]][] = [
    // Reaches the interaction through functions.openApi and inputs.functions.binding; the agent has no tools.
    ['handbook-search', ['connector:handbook-search', 'interaction:ask-handbook', 'tool:search-handbook']],
    // Reaches the interaction through its agent and through a binding naming tool and agent.
    [
      'open-meteo-forecast',
      ['agent:weather-assistant', 'connector:open-meteo-forecast', 'interaction:weather', 'tool:current-weather'],
    ],
    // Reaches the interaction through its agent and through inputs.functions.auth, and the triage interaction through
    // the agent its agent hands tasks to (triage-agent pins billing-agent); support-chat shares support-agent, and
    // check-refund's order-checker looks orders up.
    [
      'orders-get-order',
      [
        'agent:billing-agent',
        'agent:order-checker',
        'agent:support-agent',
        'agent:triage-agent',
        'connector:orders-get-order',
        'interaction:check-refund',
        'interaction:support-any-shop',
        'interaction:support-chat',
        'interaction:triage',
        'tool:get-order',
      ],
    ],
    [
      'orders-refund-order',
      [
        'agent:billing-agent',
        'agent:support-agent',
        'agent:triage-agent',
        'connector:orders-refund-order',
        'interaction:support-any-shop',
        'interaction:support-chat',
        'interaction:triage',
        'tool:refund-order',
      ],
    ],
  ];
  for (const [connector, expected] of cases) {
    it(`${connector}: exactly ${expected.length} resources get new versions`, async () => {
      const changes = await plan(await variant({ [`connectors/open-api/${connector}.mtr`]: url }));
      expect(updated(changes)).toEqual(expected);
      for (const change of changes.filter((c) => c.action === 'update')) expect(change.version).toBe(2);
    });
  }
});

describe('what a dry run says changed for the model', { timeout: 120_000 }, () => {
  it('marks a renamed parameter and a narrowed type as breaking, and lists guidance and approval turned off', async () => {
    const dir = await variant({
      'connectors/open-api/orders-refund-order.mtr': (text) =>
        text
          .replace('reason = { type', 'note = { type')
          .replace('"amount", "reason"', '"amount", "note"')
          .replace(/(amount = \{\s*type = )"number"/, '$1"integer"'),
      'external-operations/open-api/refund-order.mtr': (text) =>
        text
          .replace('requiresApproval = true', 'requiresApproval = false')
          .replace('Refunds an amount', 'Refunds part'),
    });
    const result = await mt(['deploy', dir, '--dry-run'], servers[3]);
    expect(result.code, result.stderr).toBe(0);
    const block = result.stdout.split(/\n(?=\S)/).find((row) => /^tool\s+refund-order\s+update\s+1 → 2/.test(row));
    expect(block?.split('\n').slice(1)).toEqual([
      '    ~ guidance changed',
      '    ! parameter renamed: request.reason → request.note (breaking)',
      '    ! parameter type narrowed: request.amount (breaking)',
      '    ~ approval turned off',
      '    ~ connector orders-refund-order: version 1 → 2',
    ]);
    expect(result.stderr).toContain('2 breaking change(s) marked with !');
    const tool = (await plan(dir)).find((c) => c.name === 'refund-order');
    expect(tool?.breaking).toEqual([
      'parameter renamed: request.reason → request.note',
      'parameter type narrowed: request.amount',
    ]);
  });
});

describe('deploy atomicity and concurrency', { timeout: 120_000 }, () => {
  it('a deploy whose last write fails leaves every table as it was, compared by content', async () => {
    await db.exec(`
      CREATE FUNCTION mt_e2e_refuse() RETURNS trigger AS $$
      BEGIN
        IF NEW.kind = 'interaction' THEN RAISE EXCEPTION 'refused by the e2e test'; END IF;
        RETURN NEW;
      END; $$ LANGUAGE plpgsql;
      CREATE TRIGGER mt_e2e_refuse BEFORE INSERT ON mt_resource_versions
        FOR EACH ROW EXECUTE FUNCTION mt_e2e_refuse();
    `);
    try {
      const before = await dumpTables();
      const dir = await variant({
        'connectors/open-api/orders-get-order.mtr': (t) => t.replace('orders.example.com', 'orders2.example.com'),
      });
      const result = await mt(['deploy', dir], servers[0]);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/^error \[api:server:internal\]/m);
      expect(await dumpTables()).toEqual(before);
    } finally {
      await db.exec('DROP TRIGGER mt_e2e_refuse ON mt_resource_versions; DROP FUNCTION mt_e2e_refuse();');
    }
  });

  it('two deploys of different content through two servers at once end as one applied after the other', async () => {
    const a = await variant({
      'connectors/open-api/orders-get-order.mtr': (t) => t.replace(/^description = ".*"$/m, 'description = "A"'),
    });
    const b = await variant({
      'connectors/open-api/orders-get-order.mtr': (t) => t.replace(/^description = ".*"$/m, 'description = "B"'),
      'connectors/open-api/handbook-search.mtr': (t) => t.replace(/^description = ".*"$/m, 'description = "B"'),
    });
    const [planA, planB] = await Promise.all([plan(a, servers[1], false), plan(b, servers[2], false)]);
    const version = (changes: Change[]) => changes.find((c) => c.name === 'orders-get-order')!.version;
    // Each saw the other's result or none of it: versions 2 and 3, never both 2.
    expect([version(planA), version(planB)].sort()).toEqual([2, 3]);
    const [first, last] = version(planA) === 3 ? [b, a] : [a, b];
    // The namespace now holds exactly the last one's content.
    expect(updated(await plan(last))).toEqual([]);
    const { rows } = await db.query<{ description: string }>(
      "SELECT resource->>'description' AS description FROM mt_resource_versions WHERE kind = 'connector' " +
        "AND name = 'orders-get-order' ORDER BY version",
    );
    expect(rows.slice(1).map((r) => r.description)).toEqual(first === a ? ['A', 'B'] : ['B', 'A']);
    const handbook = await db.query<{ version: number }>(
      "SELECT version FROM mt_resource_versions WHERE kind = 'connector' AND name = 'handbook-search'",
    );
    // B changed the handbook connector once; A, built on the example repo, changed it back if it came last.
    expect(handbook.rows).toHaveLength(last === a ? 3 : 2);
  });
});
