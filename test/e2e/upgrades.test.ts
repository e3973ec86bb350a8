import { randomBytes } from 'node:crypto';
import { copyFile, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPgDb, loadMigrations, migrate } from '@maitento/store';
import { createTestDatabase, TEST_SERVER_URL, type TestDatabase } from '@maitento/testkit';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from './helpers/api.js';
import { FIRST_REFUND, REDRAFTED_REFUND } from './helpers/model-script.js';
import { type ServeProcess, startServe } from './helpers/processes.js';
import { ORDERS_SECRET, type RunsStack, startRunsStack } from './helpers/stack.js';
import { runMt } from './support/harness.js';

// Upgrades in production (issue #48, docs/operations.md "Upgrades"): `mt migrate` as the schema's owner, `mt serve`
// and `mt worker` as a runtime role with no DDL right and MT_MIGRATE=off; then "the next release" (an extra migration
// folder, as the next release would ship it) migrates the database while this release serves it.
const suffix = randomBytes(4).toString('hex');
const OWNER = `mt_owner_${suffix}`;
const RUNTIME = `mt_runtime_${suffix}`;
let database: TestDatabase;
let admin: pg.Client;
let stack: RunsStack;
let ownerUrl: string;
let runtimeUrl: string;
let checkBefore: { code: number | null; stderr: string };
let migrated: { code: number | null; stdout: string; stderr: string };
let nextDir: string;
const known = loadMigrations().at(-1)?.version ?? 0;

function urlAs(role: string): string {
  const url = new URL(database.url);
  url.username = role;
  url.password = '';
  return url.toString();
}

beforeAll(async () => {
  database = await createTestDatabase('mt_e2e_upgrades');
  admin = new pg.Client({ connectionString: TEST_SERVER_URL });
  await admin.connect();
  // The owner owns the database (so it may create pg-boss's schema) and, through pg_database_owner, its public schema;
  // the runtime role is a plain login: no superuser, no CREATE anywhere.
  await admin.query(`CREATE ROLE ${OWNER} LOGIN`);
  await admin.query(`CREATE ROLE ${RUNTIME} LOGIN NOINHERIT`);
  await admin.query(`ALTER DATABASE "${database.name}" OWNER TO ${OWNER}`);
  ownerUrl = urlAs(OWNER);
  runtimeUrl = urlAs(RUNTIME);
  const home = await mkdtemp(join(tmpdir(), 'mt-e2e-upgrades-'));
  try {
    checkBefore = await runMt(['migrate', '--check'], { home, env: { MT_MIGRATE_DATABASE_URL: ownerUrl } });
    migrated = await runMt(['migrate', '--database-url', ownerUrl, '--grant-runtime', RUNTIME], { home });
  } finally {
    await rm(home, { recursive: true, force: true });
  }
  // Two servers (each with its worker) and a worker alone, all as the runtime role, none migrating.
  stack = await startRunsStack({
    servers: 2,
    workers: 1,
    env: { DATABASE_URL: runtimeUrl, MT_MIGRATE: 'off' },
  });
  // "The next release": this release's migrations and one more, an expand step (compatible-from this release's last).
  nextDir = await mkdtemp(join(tmpdir(), 'mt-next-release-'));
  const shipped = join(new URL('../../packages/store/sql/', import.meta.url).pathname);
  for (const file of await readdir(shipped))
    if (file.endsWith('.sql')) await copyFile(join(shipped, file), join(nextDir, file));
}, 120_000);

afterAll(async () => {
  await stack?.close();
  await database?.drop();
  if (admin) {
    for (const role of [RUNTIME, OWNER]) await admin.query(`DROP ROLE IF EXISTS ${role}`).catch(() => {});
    await admin.end();
  }
  if (nextDir) await rm(nextDir, { recursive: true, force: true });
});

const refundCalls = (order: string) => stack.upstream.requests.filter((r) => r.url.endsWith(`/${order}/refund`));

describe('mt migrate and a least-privileged runtime role', { timeout: 60_000 }, () => {
  it('mt migrate --check refuses an unmigrated database; mt migrate applies every migration as the owner', () => {
    expect(checkBefore.code).not.toBe(0);
    expect(checkBefore.stderr).toContain('api:store:migrations-pending');
    expect(checkBefore.stderr).toContain(`this release needs ${known}`);
    expect(migrated.code, migrated.stderr).toBe(0);
    expect(migrated.stdout).toContain(`the schema is at version ${known}`);
  });

  it('mt migrate again applies nothing, and --check --json says where the schema stands', async () => {
    const again = await runMt(['migrate', '--database-url', ownerUrl], { home: stack.home });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain(`nothing to apply: the schema is at version ${known}`);
    const check = await runMt(['migrate', '--check', '--json'], {
      home: stack.home,
      env: { DATABASE_URL: runtimeUrl },
    });
    expect(check.code, check.stderr).toBe(0);
    expect(JSON.parse(check.stdout)).toEqual({
      known,
      found: known,
      pending: [],
      required: Math.max(...loadMigrations().map((m) => m.compatibleFrom)),
      applied: [],
      granted: false,
    });
  });

  it('the runtime role has no superuser and no CREATE on the database or its schemas', async () => {
    const superuser = new pg.Client({ connectionString: database.url });
    await superuser.connect();
    const { rows } = await superuser.query(
      `SELECT r.rolsuper, has_database_privilege($1, $2, 'CREATE') AS db_create,
              has_schema_privilege($1, 'public', 'CREATE') AS public_create,
              has_schema_privilege($1, 'pgboss', 'CREATE') AS queue_create
         FROM pg_roles r WHERE r.rolname = $1`,
      [RUNTIME, database.name],
    );
    await superuser.end();
    expect(rows).toEqual([{ rolsuper: false, db_create: false, public_create: false, queue_create: false }]);
    // The processes really connect as it.
    const { rows: sessions } = await admin.query(
      "SELECT DISTINCT usename FROM pg_stat_activity WHERE datname = $1 AND application_name LIKE 'mt-%'",
      [database.name],
    );
    expect(sessions.map((s) => s.usename)).toEqual([RUNTIME]);
  });

  it('runs complete as the runtime role: the weather flow', async () => {
    const started = await stack.api.startRun('weather', { place: 'London' });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const run = await stack.api.waitForEnd(started.body.id);
    expect(run.status, JSON.stringify(run)).toBe('Completed');
    expect(run.result).toContain('21.5');
  });

  it('approvals work as the runtime role: reject with a reason, the redraft approved, one upstream call', async () => {
    const started = await stack.api.startRun('support-desk', {
      message: 'The lamp of order U-1001 arrived broken, please refund it.',
    });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const id = started.body.id;
    const first = await stack.api.waitForRun(id, (r) => r.status === 'PendingApproval');
    expect(JSON.parse(first.pendingApproval?.argumentsJson ?? '{}').request).toEqual(FIRST_REFUND);
    const rejected = await stack.api.request('POST', `/v1/runs/${id}/reject`, { reason: 'At most 25' });
    expect(rejected.status, JSON.stringify(rejected.body)).toBe(200);
    const second = await stack.api.waitForRun(
      id,
      (r) => r.status === 'PendingApproval' && r.pendingApproval?.id !== first.pendingApproval?.id,
    );
    expect(JSON.parse(second.pendingApproval?.argumentsJson ?? '{}').request).toEqual(REDRAFTED_REFUND);
    const approved = await stack.api.request('POST', `/v1/runs/${id}/approve`, {});
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    const done = await stack.api.waitForEnd(id);
    expect(done.status, JSON.stringify(done)).toBe('Completed');
    const calls = refundCalls('U-1001');
    expect(calls).toHaveLength(1);
    expect(JSON.parse(calls[0].body)).toEqual(REDRAFTED_REFUND);
    expect(calls[0].headers['x-api-key']).toBe(ORDERS_SECRET);
  });

  it('a value of MT_MIGRATE other than on or off stops the start with a clear code', async () => {
    const error = await startServe(stack.home, { ...stack.env, MT_MIGRATE: 'sometimes' }).then(
      async (s) => {
        await s.stop();
        return undefined;
      },
      (e: Error) => e,
    );
    expect(error?.message).toContain('api:server:migrate-invalid');
  });

  it('a process with MT_MIGRATE=off refuses a database with pending migrations, naming them', async () => {
    const empty = await createTestDatabase('mt_e2e_upgrades_empty');
    try {
      const serve = startServe(stack.home, { ...stack.env, DATABASE_URL: empty.url, MT_MIGRATE: 'off' });
      const error = await serve.then(
        async (s) => {
          await s.stop();
          return undefined;
        },
        (e: Error) => e,
      );
      expect(error?.message).toContain('api:store:migrations-pending');
      expect(error?.message).toContain('mt migrate');
    } finally {
      await empty.drop();
    }
  });
});

describe('a rolling upgrade', { timeout: 90_000 }, () => {
  it('two servers serve a steady load with no failed request while the next release applies an expand step, and this release restarts after it', async () => {
    await writeFile(
      join(nextDir, `${String(known + 1).padStart(4, '0')}_next_release_expand.sql`),
      `-- mt: compatible-from ${known} (expand: a nullable column the next release writes)\n` +
        'ALTER TABLE mt_runs ADD COLUMN next_release_note text;\n',
    );
    const [a, b] = stack.servers;
    // The servers in service, as a load balancer sees them: one leaves before it is stopped, its successor joins once
    // it listens.
    let pool: ServeProcess[] = [a, b];
    const failures: string[] = [];
    const started: string[] = [];
    let requests = 0;
    let loading = true;
    const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const send = async (i: number, start: boolean) => {
      const server = pool[i % pool.length];
      try {
        const res = await fetch(`${server.url}${start ? '/v1/interactions/weather/runs' : '/v1/runs?limit=5'}`, {
          method: start ? 'POST' : 'GET',
          headers: {
            authorization: `Bearer ${stack.adminKey}`,
            ...(start ? { 'content-type': 'application/json' } : {}),
          },
          ...(start ? { body: JSON.stringify({ inputs: { place: 'London' } }) } : {}),
        });
        requests += 1;
        const text = await res.text();
        if (res.status >= 400) failures.push(`${res.status} ${text}`);
        else if (start) started.push((JSON.parse(text) as { id: string }).id);
      } catch (error) {
        failures.push(String(error));
      }
    };
    // Bounded in count and time: readers every 25 ms, a run started every 500 ms, for about 20 s.
    const reader = async (n: number) => {
      for (let i = n; loading && i < 2_000; i += 1) {
        await send(i, false);
        await pause(25);
      }
    };
    const starter = async () => {
      for (let i = 0; loading && i < 60; i += 1) {
        await send(i, true);
        await pause(500);
      }
    };
    const load = Promise.all([reader(0), reader(1), reader(2), starter()]);
    await pause(4_000);
    // The next release's `mt migrate`, as the owner, while both servers serve.
    const next = createPgDb(ownerUrl);
    try {
      expect(await migrate(next, loadMigrations(nextDir))).toEqual([known + 1]);
    } finally {
      await next.close();
    }
    await pause(4_000);
    // This release restarts on the schema the next one migrated (what a rollback or a crash loop does): out of the
    // pool, stopped, started again, back in.
    pool = [b];
    await pause(300);
    await a.stop();
    const restarted = await startServe(stack.home, stack.env);
    stack.servers[0] = restarted;
    pool = [b, restarted];
    await pause(6_000);
    loading = false;
    await load;
    expect(failures).toEqual([]);
    expect(requests).toBeGreaterThan(200);
    expect(started.length).toBeGreaterThan(10);
    // Every run started during the upgrade completed.
    const client = api(b.url, stack.adminKey);
    for (const id of started) expect((await client.waitForEnd(id)).status).toBe('Completed');
    stack.api = api(restarted.url, stack.adminKey);
    const owner = new pg.Client({ connectionString: ownerUrl });
    await owner.connect();
    try {
      const { rows } = await owner.query('SELECT version, compatible_from FROM mt_migrations WHERE version > $1', [
        known,
      ]);
      expect(rows).toEqual([{ version: known + 1, compatible_from: known }]);
    } finally {
      await owner.end();
    }
    // `mt migrate --check` of this release: the schema is usable (nothing of its own pending).
    const check = await runMt(['migrate', '--check', '--database-url', runtimeUrl], { home: stack.home });
    expect(check.code, check.stderr).toBe(0);
  });

  it('after a contract step this release refuses to start, naming the schema level it needs', async () => {
    const contract = known + 2;
    await writeFile(
      join(nextDir, `${String(contract).padStart(4, '0')}_next_release_contract.sql`),
      `-- mt: compatible-from ${contract} (contract: a release before it cannot run on it)\n` +
        'ALTER TABLE mt_runs DROP COLUMN next_release_note;\n',
    );
    const next = createPgDb(ownerUrl);
    try {
      expect(await migrate(next, loadMigrations(nextDir))).toEqual([contract]);
    } finally {
      await next.close();
    }
    const error = await startServe(stack.home, stack.env).then(
      async (s) => {
        await s.stop();
        return undefined;
      },
      (e: Error) => e,
    );
    expect(error?.message).toContain('api:store:schema-newer');
    expect(error?.message).toContain(
      `needs a release that knows schema ${contract} or later, and this one knows ${known}`,
    );
    const check = await runMt(['migrate', '--check', '--database-url', runtimeUrl], { home: stack.home });
    expect(check.code).not.toBe(0);
    expect(check.stderr).toContain('api:store:schema-newer');
  });
});
