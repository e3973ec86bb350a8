import { mkdtemp, rm, stat, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resolveConnection } from './connection.js';
import { loginFilePath, readLoginFile, writeLoginFile } from './login-file.js';

let home: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'mt-conn-'));
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

describe('loginFilePath', () => {
  it('uses $XDG_CONFIG_HOME when it is absolute, else ~/.config', () => {
    expect(loginFilePath({ XDG_CONFIG_HOME: '/x/cfg', HOME: '/h' })).toBe('/x/cfg/maitento/config.json');
    expect(loginFilePath({ XDG_CONFIG_HOME: 'relative', HOME: '/h' })).toBe('/h/.config/maitento/config.json');
    expect(loginFilePath({ HOME: '/h' })).toBe('/h/.config/maitento/config.json');
  });
});

describe('writeLoginFile', () => {
  it('makes the folder 0700 and the file 0600, also when they existed with looser modes', async () => {
    const env = { HOME: home };
    await mkdir(join(home, '.config', 'maitento'), { recursive: true, mode: 0o755 });
    await writeFile(join(home, '.config', 'maitento', 'config.json'), '{}', { mode: 0o644 });
    const file = await writeLoginFile({ apiUrl: 'http://127.0.0.1:1', apiKey: 'mt_k' }, env);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(join(home, '.config', 'maitento'))).mode & 0o777).toBe(0o700);
    expect(await readLoginFile(env)).toEqual({ apiUrl: 'http://127.0.0.1:1', apiKey: 'mt_k' });
  });

  it('reports a login file that is not JSON with its code', async () => {
    await mkdir(join(home, '.config', 'maitento'), { recursive: true });
    await writeFile(join(home, '.config', 'maitento', 'config.json'), 'nope');
    await expect(readLoginFile({ HOME: home })).rejects.toMatchObject({ code: 'api:cli:login-file-invalid' });
  });
});

describe('resolveConnection', () => {
  it('prefers flags over the environment over the login file over the default', async () => {
    const env: NodeJS.ProcessEnv = { HOME: home };
    expect(await resolveConnection({}, env)).toEqual({ apiUrl: 'http://127.0.0.1:8080', apiUrlSource: 'the default' });
    await writeLoginFile({ apiUrl: 'http://file.example:1/', apiKey: 'mt_file' }, env);
    expect(await resolveConnection({}, env)).toMatchObject({ apiUrl: 'http://file.example:1', apiKey: 'mt_file' });
    env.MT_API_URL = 'http://env.example:2';
    env.MT_API_KEY = 'mt_env';
    expect(await resolveConnection({}, env)).toMatchObject({
      apiUrl: 'http://env.example:2',
      apiUrlSource: 'MT_API_URL',
      apiKey: 'mt_env',
      apiKeySource: 'MT_API_KEY',
    });
    expect(await resolveConnection({ api: 'http://flag.example:3', key: 'mt_flag' }, env)).toMatchObject({
      apiUrl: 'http://flag.example:3',
      apiUrlSource: '--api',
      apiKey: 'mt_flag',
      apiKeySource: '--key',
    });
  });

  it('never sends the stored key to a server other than the one it was stored for', async () => {
    const env: NodeJS.ProcessEnv = { HOME: home };
    await writeLoginFile({ apiUrl: 'http://file.example:1', apiKey: 'mt_file' }, env);
    const other = await resolveConnection({ api: 'http://elsewhere.example:9' }, env);
    expect(other.apiKey).toBeUndefined();
    const same = await resolveConnection({ api: 'http://file.example:1/' }, env);
    expect(same.apiKey).toBe('mt_file');
  });

  it('refuses a server URL that is not http or https, naming where it came from', async () => {
    await expect(resolveConnection({}, { HOME: home, MT_API_URL: 'ftp://x' })).rejects.toMatchObject({
      code: 'api:cli:api-url-invalid',
      message: expect.stringContaining('MT_API_URL'),
    });
  });
});
