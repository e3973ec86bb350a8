import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

// The real built `mt` (npm test runs `tsc -b` first): a CI job with a wrong path must fail, not pass.
const root = fileURLToPath(new URL('../../../', import.meta.url));
const mtBin = join(root, 'packages/cli/bin/mt.js');
const scratch = mkdtempSync(join(tmpdir(), 'mt-check-path-'));

function mt(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [mtBin, ...args],
      { cwd: scratch, env: { PATH: process.env.PATH ?? '' }, timeout: 20_000 },
      (error, stdout, stderr) => {
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('mt check of a path that is not a config repo', () => {
  it('refuses a path where nothing is, with api:cli:not-a-config-repo and exit 1', async () => {
    const missing = join(scratch, 'nonexistent');
    const result = await mt('check', missing);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `error [api:cli:not-a-config-repo]: ${missing} is not a config repo: nothing is there`,
    );
    expect(result.stderr).toContain('hint: give the folder that holds connectors/');
    expect(result.stderr).not.toMatch(/^ok/m);
  });

  it('refuses a single .mtr file', async () => {
    const file = join(scratch, 'some-file.mtr');
    writeFileSync(file, 'method = "GET"\n');
    const result = await mt('check', file);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('is not a config repo: it is a file, not a folder');
  });

  it('refuses a folder with none of the resource folders, also as JSON', async () => {
    const empty = join(scratch, 'empty');
    mkdirSync(join(empty, 'docs'), { recursive: true });
    const result = await mt('check', empty, '--json');
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toEqual({
      code: 'api:cli:not-a-config-repo',
      error: `${empty} is not a config repo: it has none of the folders auth-providers/, connectors/, external-operations/, agents/, interactions/, schedules/, triggers/`,
    });
  });

  // docs/cli.md: `mt deploy` and `mt extop-call --repo` check the same (they said api:cli:repo-not-found, which
  // errors.md did not list for extop-call nor for a file, with a hint naming `mt deploy`).
  it('refuses the same paths in mt deploy and mt extop-call --repo, with the same code and reason', async () => {
    const missing = join(scratch, 'nonexistent');
    const file = join(scratch, 'other-file.mtr');
    writeFileSync(file, 'method = "GET"\n');
    for (const [args, reason] of [
      [['deploy', missing, '--key', 'mt_x'], `${missing} is not a config repo: nothing is there`],
      [['deploy', file, '--key', 'mt_x', '--json'], `${file} is not a config repo: it is a file, not a folder`],
      [['extop-call', 'get-order', '--repo', missing], `${missing} is not a config repo: nothing is there`],
      [['extop-call', 'get-order', '--repo', file], `${file} is not a config repo: it is a file, not a folder`],
    ] as const) {
      const result = await mt(...args);
      expect(result.code, args.join(' ')).toBe(1);
      if (args.includes('--json')) {
        expect(JSON.parse(result.stdout)).toEqual({ code: 'api:cli:not-a-config-repo', error: reason });
      } else {
        expect(result.stderr).toContain(`error [api:cli:not-a-config-repo]: ${reason}`);
        expect(result.stderr).toContain('hint: give the folder that holds connectors/');
      }
    }
  });

  it('accepts a repo with only an agents/ folder, even an empty one', async () => {
    const repo = join(scratch, 'repo');
    mkdirSync(join(repo, 'agents'), { recursive: true });
    const result = await mt('check', repo);
    expect(result.stderr).toBe('ok: 0 resources checked, 0 errors, 0 warnings\n');
    expect(result.code).toBe(0);
  });
});
