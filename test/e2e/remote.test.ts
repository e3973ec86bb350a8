import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createTestDatabase, type TestDatabase } from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  copyExampleRepo,
  type RunOptions,
  requireBuiltCli,
  runMt,
  runMtInTerminal,
  type ServeProcess,
  startServer,
  tempHome,
} from './support/harness.js';

// The real `mt serve` on a fresh Postgres database, and the real `mt` process run as a user would.
const ADMIN_KEY = `mt_e2e_${Date.now().toString(36)}_admin_key_0123456789`;
const SECRET_VALUE = 'orders-secret-value-7f3a9c';
let db: TestDatabase;
let home: string;
let server: ServeProcess;
let repo: string;

function mt(args: string[], options: RunOptions = {}) {
  return runMt(args, { home, ...options, env: { MT_API_URL: server.url, MT_API_KEY: ADMIN_KEY, ...options.env } });
}

async function mtJson<T>(args: string[], options: RunOptions = {}): Promise<T> {
  const result = await mt([...args, '--json'], options);
  expect(result.code, `mt ${args.join(' ')}: ${result.stderr}`).toBe(0);
  return JSON.parse(result.stdout) as T;
}

interface Change {
  kind: string;
  name: string;
  action: string;
  version: number;
  previousVersion?: number;
  breaking: string[];
}

beforeAll(async () => {
  requireBuiltCli();
  [db, home, repo] = await Promise.all([
    createTestDatabase('mt_e2e', { migrated: true }),
    tempHome(),
    copyExampleRepo(),
  ]);
  server = await startServer(db.url, ADMIN_KEY, home);
});

afterAll(async () => {
  await server?.stop();
  await db?.drop();
  if (home) await rm(home, { recursive: true, force: true });
  if (repo) await rm(repo, { recursive: true, force: true });
});

describe('mt against a real server', { timeout: 120_000 }, () => {
  it('refuses a deploy naming a secret the namespace lacks, showing the diagnostic with its source line', async () => {
    // Commands that cannot affect each other run side by side in this file; each is still its own `mt` process. A
    // read that checks what another command stored (or did not) runs after it.
    const [result, json] = await Promise.all([mt(['deploy', repo]), mt(['deploy', repo, '--json'])]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/external-operations\/open-api\/[a-z-]+\.mtr:\d+:\d+ error api:secrets:not-found/);
    expect(result.stderr).toContain('orders-api-key');
    expect(result.stderr).toMatch(/\d+ \| .*@ref\("orders-api-key"\)/);
    expect(result.stderr).toContain('error [api:deploy:invalid]');
    expect(json.code).toBe(1);
    const refusal = JSON.parse(json.stdout);
    expect(refusal.code).toBe('api:deploy:invalid');
    expect(refusal.diagnostics.map((d: { code: string }) => d.code)).toContain('api:secrets:not-found');
    expect(await mtJson<unknown[]>(['connector-list'])).toEqual([]);
  });

  it('creates a secret from stdin without ever printing its value', async () => {
    const created = await mt(['secret-create', 'orders-api-key', '--json'], { input: `${SECRET_VALUE}\n` });
    expect(created.code).toBe(0);
    const secret = JSON.parse(created.stdout);
    expect(secret).toMatchObject({ name: 'orders-api-key', id: expect.any(String) });
    const listed = await mt(['secret-list']);
    expect(listed.stdout).toContain('orders-api-key');
    expect(listed.stdout).toContain(secret.id);
    for (const output of [created.stdout, created.stderr, listed.stdout, listed.stderr, server.log()]) {
      expect(output).not.toContain(SECRET_VALUE);
    }
  });

  it('deploys the example repo, and a second deploy of it changes nothing', async () => {
    const first = await mtJson<{ applied: boolean; changes: Change[] }>(['deploy', repo]);
    expect(first.applied).toBe(true);
    expect(first.changes.length).toBeGreaterThanOrEqual(8);
    expect(first.changes.every((c) => c.action === 'create' && c.version === 1)).toBe(true);
    const kinds = new Set(first.changes.map((c) => c.kind));
    expect([...kinds].sort()).toEqual(['agent', 'connector', 'interaction', 'tool']);

    const second = await mt(['deploy', repo]);
    expect(second.code).toBe(0);
    expect(second.stderr).toContain(`deployed: 0 created, 0 updated, ${first.changes.length} unchanged`);
    const rows = second.stdout.trim().split('\n');
    expect(rows[0]).toMatch(/^KIND\s+NAME\s+ACTION\s+VERSION$/);
    expect(rows.slice(1).every((row) => /\sunchanged\s+1$/.test(row))).toBe(true);
    expect(rows).toHaveLength(first.changes.length + 1);
  });

  it('plans a changed connector and the tools on it as updates on a dry run, and stores nothing', async () => {
    const changed = await copyExampleRepo();
    const file = join(changed, 'connectors/open-api/orders-get-order.mtr');
    const text = await readFile(file, 'utf8');
    await writeFile(file, text.replace(/^description = "(.*)"$/m, 'description = "$1 (changed)"'));
    try {
      const [plan, human] = await Promise.all([
        mtJson<{ applied: boolean; changes: Change[] }>(['deploy', changed, '--dry-run']),
        mt(['deploy', changed, '--dry-run']),
      ]);
      expect(plan.applied).toBe(false);
      const byName = new Map(plan.changes.map((c) => [`${c.kind}:${c.name}`, c]));
      expect(byName.get('connector:orders-get-order')).toMatchObject({
        action: 'update',
        version: 2,
        previousVersion: 1,
      });
      expect(byName.get('tool:get-order')).toMatchObject({ action: 'update', version: 2 });
      expect(byName.get('connector:open-meteo-forecast')).toMatchObject({ action: 'unchanged', version: 1 });
      expect(byName.get('tool:current-weather')).toMatchObject({ action: 'unchanged' });

      expect(human.code).toBe(0);
      expect(human.stdout).toMatch(/connector\s+orders-get-order\s+update\s+1 → 2/);
      expect(human.stderr).toMatch(/^dry run: 0 to create, \d+ to update, \d+ unchanged; nothing was stored/m);

      const [versions, extopVersions] = await Promise.all([
        mtJson<unknown[]>(['connector-versions', 'orders-get-order']),
        mtJson<unknown[]>(['extop-versions', 'get-order']),
      ]);
      expect(versions).toHaveLength(1);
      expect(extopVersions).toHaveLength(1);
    } finally {
      await rm(changed, { recursive: true, force: true });
    }
  });

  it('lists connectors and tools as JSON and as aligned tables', async () => {
    const [connectors, extops, table] = await Promise.all([
      mtJson<{ name: string; latestVersion: number; enabled: boolean }[]>(['connector-list']),
      mtJson<{ name: string }[]>(['extop-list']),
      mt(['extop-list']),
    ]);
    expect(connectors).toContainEqual({ name: 'orders-get-order', latestVersion: 1, enabled: true });
    expect(extops.map((e) => e.name)).toEqual(expect.arrayContaining(['current-weather', 'get-order', 'refund-order']));
    expect(table.stdout.split('\n')[0]).toMatch(/^NAME\s+LATEST\s+ENABLED\s+CALLABLE$/);
    expect(table.stdout).toMatch(/current-weather\s+1\s+yes\s+yes/);
  });

  it("shows a tool's model-facing definition", async () => {
    const [extop, human] = await Promise.all([
      mtJson<{ name: string; definition: { name: string; parameters: unknown } }>(['extop-get', 'current-weather']),
      mt(['extop-get', 'current-weather']),
    ]);
    expect(extop.definition.name).toBe('current-weather');
    const params = JSON.stringify(extop.definition.parameters);
    expect(params).toContain('query.latitude');
    expect(params).not.toContain('query.current"');
    expect(human.stdout).toContain('What the model sees:');
    expect(human.stdout).toMatch(/connector\s+open-meteo-forecast \(version 1\)/);
  });

  it('disables and enables a connector version and a tool version', async () => {
    const off = await mtJson(['connector-version-disable', 'orders-get-order', '1']);
    expect(off).toEqual({ name: 'orders-get-order', version: 1, enabled: false });
    const [versions, versionsTable] = await Promise.all([
      mtJson<{ version: number; enabled: boolean; createdAt: string; deployedBy: string }[]>([
        'connector-versions',
        'orders-get-order',
      ]),
      mt(['connector-versions', 'orders-get-order']),
    ]);
    // Each version records the key that deployed it (the admin key of this file).
    const keys = await mtJson<{ id: string; role: string }[]>(['key-list']);
    const deployedBy = keys.find((key) => key.role === 'admin')!.id;
    expect(versions).toEqual([{ version: 1, enabled: false, createdAt: expect.any(String), deployedBy }]);
    expect(Object.keys(versions[0]).sort()).toEqual(['createdAt', 'deployedBy', 'enabled', 'version']);
    expect(versionsTable.stdout).toMatch(new RegExp(`^1\\s+no\\s+\\S+\\s+${deployedBy}$`, 'm'));
    expect(await mtJson(['connector-version-enable', 'orders-get-order', '1'])).toEqual({
      name: 'orders-get-order',
      version: 1,
      enabled: true,
    });
    expect(await mtJson(['connector-versions', 'orders-get-order'])).toEqual([
      { version: 1, enabled: true, createdAt: versions[0].createdAt, deployedBy },
    ]);

    const human = await mt(['extop-version-disable', 'get-order', '1']);
    expect(human.code).toBe(0);
    expect(human.stderr).toContain('disabled extop get-order version 1');
    expect(await mtJson(['extop-versions', 'get-order'])).toEqual([
      { version: 1, enabled: false, createdAt: expect.any(String), deployedBy },
    ]);
    await mt(['extop-version-enable', 'get-order', '1']);
    expect(await mtJson(['extop-versions', 'get-order'])).toEqual([
      { version: 1, enabled: true, createdAt: expect.any(String), deployedBy },
    ]);
  });

  it('answers a version that does not exist with exit 1 and the server code', async () => {
    const result = await mt(['connector-version-disable', 'orders-get-order', '99']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error \[api:[a-z-]+:[a-z-]+\]: /);
  });
});

describe('mt keys and roles', { timeout: 120_000 }, () => {
  let userKey: { id: string; key: string };

  it('creates a user key that may read but gets 403 and exit 1 on deploy', async () => {
    userKey = await mtJson(['key-create', '--role', 'user', '--name', 'reader']);
    expect(userKey).toMatchObject({ role: 'user', name: 'reader', key: expect.any(String) });
    const asUser = { env: { MT_API_KEY: userKey.key } };
    const [list, deploy, json] = await Promise.all([
      mt(['connector-list', '--json'], asUser),
      mt(['deploy', repo], asUser),
      mt(['deploy', repo, '--json'], asUser),
    ]);
    expect(list.code).toBe(0);
    expect(deploy.code).toBe(1);
    expect(deploy.stderr).toMatch(/^error \[api:[a-z-]+:[a-z-]+\]: /m);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ code: expect.stringMatching(/^api:/) });
  });

  it('lists keys without the keys themselves and deletes one so it stops working', async () => {
    const [keys, listed] = await Promise.all([mtJson<{ id: string; role: string }[]>(['key-list']), mt(['key-list'])]);
    expect(keys.map((k) => k.id)).toContain(userKey.id);
    expect(listed.stdout).not.toContain(userKey.key);
    expect(listed.stdout).not.toContain(ADMIN_KEY);
    expect((await mt(['key-delete', userKey.id])).code).toBe(0);
    const after = await mt(['connector-list'], { env: { MT_API_KEY: userKey.key } });
    expect(after.code).toBe(1);
    expect(after.stderr).toContain('the key came from MT_API_KEY');
  });

  it("reads the server's address and key from the folder's .env, the environment's own winning (#45)", async () => {
    const folder = await mkdtemp(join(home, 'dot-env-'));
    await writeFile(join(folder, '.env'), `MT_API_URL=${server.url}\nMT_API_KEY=${ADMIN_KEY}\n`);
    const fromFile = await runMt(['connector-list', '--json'], { home, cwd: folder });
    expect(fromFile.code, fromFile.stderr).toBe(0);
    expect(JSON.parse(fromFile.stdout)).toEqual(expect.any(Array));
    const overridden = await runMt(['connector-list'], { home, cwd: folder, env: { MT_API_KEY: 'mt_not-a-key' } });
    expect(overridden.code).not.toBe(0);
    expect(overridden.stderr).toContain('api:auth:');
  });

  it('namespace-create prints the key alone on stdout, and its note on stderr says where it went (#45)', async () => {
    // A reader captures it with KEY=$(mt namespace-create ...): the note must not say it is shown above.
    const created = await mt(['namespace-create', 'team-note']);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout.trim()).toMatch(/^mt_\S+$/);
    expect(created.stderr).toMatch(
      /created namespace team-note; its admin key \(id \S+\) went to standard output, only this once: keep it/,
    );
    expect(created.stderr).not.toContain('shown above');
  });

  it('creates a namespace whose admin key sees none of the default namespace', async () => {
    const created = await mtJson<{ name: string; key: { key: string; role: string } }>(['namespace-create', 'team-b']);
    expect(created).toMatchObject({ name: 'team-b', key: { role: 'admin' } });
    const other = { env: { MT_API_KEY: created.key.key } };
    const [connectors, versions] = await Promise.all([
      mtJson(['connector-list'], other),
      mt(['connector-versions', 'orders-get-order'], other),
    ]);
    expect(connectors).toEqual([]);
    expect(versions.code).toBe(1);
  });
});

describe('mt secrets by name', { timeout: 120_000 }, () => {
  it('rotates and deletes a secret named by its name', async () => {
    await mt(['secret-create', 'spare'], { input: 'first-value' });
    const rotated = await mt(['secret-rotate', 'spare', '--json'], { input: 'second-value' });
    expect(rotated.code).toBe(0);
    expect(JSON.parse(rotated.stdout)).toMatchObject({ name: 'spare' });
    expect(rotated.stdout + rotated.stderr).not.toContain('second-value');
    expect((await mt(['secret-delete', 'spare'])).code).toBe(0);
    const names = (await mtJson<{ name: string }[]>(['secret-list'])).map((s) => s.name);
    expect(names).not.toContain('spare');
    const missing = await mt(['secret-delete', 'spare']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('error [api:cli:secret-not-found]');
  });

  it('asks for a secret value on a terminal without echoing it', async () => {
    const typed = 'typed-on-a-terminal-42';
    const result = await runMtInTerminal(['secret-create', 'typed-secret'], {
      home,
      env: { MT_API_URL: server.url, MT_API_KEY: ADMIN_KEY },
      prompt: 'secret value: ',
      typed,
    });
    expect(result.code, result.stdout).toBe(0);
    expect(result.stdout).toContain('secret value: ');
    expect(result.stdout).toContain('created secret typed-secret');
    expect(result.stdout).not.toContain(typed);
    const names = (await mtJson<{ name: string }[]>(['secret-list'])).map((s) => s.name);
    expect(names).toContain('typed-secret');
  });

  it('refuses an empty secret value', async () => {
    const result = await mt(['secret-create', 'empty'], { input: '' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('error [api:cli:value-missing]');
  });
});

describe('mt login', { timeout: 120_000 }, () => {
  it('checks the key, stores it readable only by the user, and later commands use it', async () => {
    const loginHome = await tempHome();
    try {
      const bad = await runMt(['login', '--api', server.url], { home: loginHome, input: 'mt_wrong_key' });
      expect(bad.code).toBe(1);
      await expect(stat(join(loginHome, '.config/maitento/config.json'))).rejects.toThrow();

      const good = await runMt(['login', '--api', server.url], { home: loginHome, input: `${ADMIN_KEY}\n` });
      expect(good.code, good.stderr).toBe(0);
      expect(good.stdout + good.stderr).not.toContain(ADMIN_KEY);
      const file = join(loginHome, '.config/maitento/config.json');
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      expect((await stat(join(loginHome, '.config/maitento'))).mode & 0o777).toBe(0o700);
      expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ apiUrl: server.url, apiKey: ADMIN_KEY });

      const list = await runMt(['connector-list', '--json'], { home: loginHome });
      expect(list.code, list.stderr).toBe(0);
      expect(JSON.parse(list.stdout)).toContainEqual({ name: 'orders-get-order', latestVersion: 1, enabled: true });

      const xdg = join(loginHome, 'xdg');
      const viaXdg = await runMt(['login', '--api', server.url, '--key', ADMIN_KEY], {
        home: loginHome,
        env: { XDG_CONFIG_HOME: xdg },
      });
      expect(viaXdg.code).toBe(0);
      expect((await stat(join(xdg, 'maitento/config.json'))).mode & 0o777).toBe(0o600);
    } finally {
      await rm(loginHome, { recursive: true, force: true });
    }
  });
});
