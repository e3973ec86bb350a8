import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  applyDeploy,
  bootstrap,
  createPgliteDb,
  createSecret,
  getVersion,
  loadMigrations,
  migrate,
  readSecretValue,
  resolveSecretKey,
  setVersionEnabled,
  loadCallableTool,
} from '@maitento/store';
import { afterAll, describe, expect, it } from 'vitest';
import { sampleRepo } from './fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'mt-pglite-'));

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('PGlite', () => {
  it('runs the same migrations, deploy, secrets and disable flow in a data folder, and keeps it on reopen', async () => {
    const resolved = resolveSecretKey({ dataDir: dir });
    expect(resolved.source).toBe('generated');
    expect(resolved.warning).toMatch(/secret\.key/);
    expect(statSync(join(dir, 'secret.key')).mode & 0o777).toBe(0o600);

    const db = await createPgliteDb(join(dir, 'db'));
    expect(await migrate(db)).toEqual(loadMigrations().map((m) => m.version));
    const boot = await bootstrap(db);
    expect(boot).toMatchObject({ created: true, generated: true });
    const first = await applyDeploy(db, 'default', sampleRepo());
    expect(first.changes.map((c) => c.action)).toEqual(Array(7).fill('create'));
    const second = await applyDeploy(db, 'default', sampleRepo({ weather: { url: 'https://api.open-meteo.com/v9' } }));
    expect(second.changes.filter((c) => c.action === 'update').map((c) => c.name)).toEqual([
      'open-meteo-forecast',
      'current-weather',
      'weather-agent',
    ]);
    await createSecret(db, resolved.key, 'default', { name: 'orders-key', value: 'pglite-secret' });
    await setVersionEnabled(db, 'default', 'connector', 'open-meteo-forecast', 2, false);
    await expect(loadCallableTool(db, 'default', 'current-weather')).rejects.toMatchObject({
      code: 'api:connectors:version-disabled',
    });
    await db.close();

    const again = await createPgliteDb(join(dir, 'db'));
    expect(await migrate(again)).toEqual([]);
    expect(await bootstrap(again)).toEqual({ created: false });
    expect((await getVersion(again, 'default', 'connector', 'open-meteo-forecast')).enabled).toBe(false);
    const key = resolveSecretKey({ dataDir: dir });
    expect(key.source).toBe('file');
    expect((await readSecretValue(again, key.key, 'default', { name: 'orders-key' }))?.value).toBe('pglite-secret');
    const noop = await applyDeploy(again, 'default', sampleRepo({ weather: { url: 'https://api.open-meteo.com/v9' } }));
    expect(noop.changes.map((c) => c.action)).toEqual(Array(7).fill('unchanged'));
    await again.close();
  });

  it('locks its data folder: a second open fails while a live process holds it, a dead holder is taken over', async () => {
    const folder = join(dir, 'locked');
    const lock = `${folder}.lock`;
    const db = await createPgliteDb(folder);
    expect(readFileSync(lock, 'utf8').trim()).toBe(String(process.pid));
    await expect(createPgliteDb(folder)).rejects.toMatchObject({ code: 'api:store:data-locked', status: 409 });
    await db.close();
    expect(existsSync(lock)).toBe(false);

    // Another live process holds the lock.
    const holder = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)'], { stdio: 'ignore' });
    try {
      writeFileSync(lock, `${holder.pid}\n`);
      await expect(createPgliteDb(folder)).rejects.toMatchObject({
        code: 'api:store:data-locked',
        message: expect.stringContaining(`pid ${holder.pid}`),
      });
    } finally {
      const exited = new Promise((resolve) => holder.once('exit', resolve));
      holder.kill('SIGKILL');
      await exited;
    }
    // Its process is gone now: the lock is stale and is taken over.
    const reopened = await createPgliteDb(folder);
    expect(readFileSync(lock, 'utf8').trim()).toBe(String(process.pid));
    await reopened.close();
  });

  it('refuses to start without MT_SECRET_KEY when there is no data folder (a PostgreSQL server)', () => {
    expect(() => resolveSecretKey({})).toThrow(expect.objectContaining({ code: 'api:secrets:key-missing' }));
  });
});
