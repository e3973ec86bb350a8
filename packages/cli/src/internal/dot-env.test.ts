import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadDotEnv, nearestDotEnv } from './dot-env.js';

// issue #45, item 4: one `.env` in the folder that `mt serve` and the CLI both read; the environment wins.
const dir = mkdtempSync(join(tmpdir(), 'mt-dot-env-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the folder's .env", () => {
  it('sets what the environment lacks and keeps what it has', () => {
    writeFileSync(
      join(dir, '.env'),
      '# the tutorials\' settings\nMT_API_URL=http://127.0.0.1:8080\nMT_EGRESS_ALLOW="127.0.0.1"\nMT_API_KEY=from-file\n',
    );
    const env: NodeJS.ProcessEnv = { MT_API_KEY: 'from-environment' };
    expect(loadDotEnv(dir, env)).toEqual(['MT_API_URL', 'MT_EGRESS_ALLOW']);
    expect(env).toEqual({
      MT_API_URL: 'http://127.0.0.1:8080',
      MT_EGRESS_ALLOW: '127.0.0.1',
      MT_API_KEY: 'from-environment',
    });
  });

  it('is found from a folder below it (a config repo in the tutorials folder); an empty variable is filled', () => {
    const below = join(dir, 'weather-config', 'agents');
    mkdirSync(below, { recursive: true });
    const env: NodeJS.ProcessEnv = { MT_API_URL: '' };
    expect(loadDotEnv(below, env).sort()).toEqual(['MT_API_KEY', 'MT_API_URL', 'MT_EGRESS_ALLOW']);
    expect(env.MT_API_URL).toBe('http://127.0.0.1:8080');
  });

  it('reads nothing, and says nothing, without a file here or above', () => {
    const lines: string[] = [];
    const env: NodeJS.ProcessEnv = {};
    const bare = mkdtempSync(join(tmpdir(), 'mt-no-dot-env-'));
    try {
      expect(nearestDotEnv(bare)).toBeUndefined();
      expect(loadDotEnv(bare, env, (line) => lines.push(line))).toEqual([]);
    } finally {
      rmSync(bare, { recursive: true, force: true });
    }
    expect(env).toEqual({});
    expect(lines).toEqual([]);
  });

  it('says in one line that a .env it cannot read was not read, and goes on', () => {
    const other = join(dir, 'other');
    mkdirSync(join(other, '.env'), { recursive: true });
    const lines: string[] = [];
    expect(loadDotEnv(other, {}, (line) => lines.push(line))).toEqual([]);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^mt: .*\.env was not read \(.*\); going on without it$/);
  });
});
