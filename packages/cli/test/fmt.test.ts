import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

// The real built `mt` (npm test runs `tsc -b` first), run in a temporary directory.
const root = fileURLToPath(new URL('../../../', import.meta.url));
const mtBin = join(root, 'packages/cli/bin/mt.js');
const dirs: string[] = [];

function repo(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'mt-fmt-'));
  dirs.push(dir);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

function mt(cwd: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [mtBin, ...args],
      { cwd, env: { PATH: process.env.PATH ?? '' }, timeout: 20_000 },
      (error, stdout, stderr) => {
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

const read = (dir: string, path: string) => readFileSync(join(dir, path), 'utf8');

const messy = 'method="GET"\nurl = "https://api.example.com"   // where\n';
const tidy = 'method = "GET"\nurl = "https://api.example.com" // where\n';

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('mt fmt', () => {
  it('rewrites the files that change, lists them on stderr, and leaves formatted ones alone', async () => {
    const dir = repo({
      'connectors/open-api/a.mtr': messy,
      'agents/b.mtr': 'model = "openai:gpt-4o-mini"\n',
      'notes.txt': 'x=1',
    });
    const result = await mt(dir, 'fmt');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('formatted connectors/open-api/a.mtr');
    expect(result.stderr).not.toContain('agents/b.mtr');
    expect(read(dir, 'connectors/open-api/a.mtr')).toBe(tidy);
    expect(read(dir, 'agents/b.mtr')).toBe('model = "openai:gpt-4o-mini"\n');
    expect(read(dir, 'notes.txt')).toBe('x=1');
  });

  it('with --check changes nothing, lists the files that would change on stdout, and exits 1', async () => {
    const dir = repo({ 'a.mtr': messy, 'sub/b.mtr': messy, 'c.mtr': tidy });
    const result = await mt(dir, 'fmt', '--check');
    expect(result.code).toBe(1);
    expect(result.stdout.trim().split('\n')).toEqual(['a.mtr', 'sub/b.mtr']);
    expect(read(dir, 'a.mtr')).toBe(messy);
    expect(read(dir, 'sub/b.mtr')).toBe(messy);
  });

  it('with --check exits 0 when everything is formatted', async () => {
    const dir = repo({ 'a.mtr': tidy });
    const result = await mt(dir, 'fmt', '--check');
    expect(result).toMatchObject({ code: 0, stdout: '' });
  });

  it('skips node_modules and .git at any depth, and takes DIR as an argument', async () => {
    const dir = repo({
      'cfg/node_modules/x.mtr': messy,
      'cfg/.git/y.mtr': messy,
      'cfg/sub/node_modules/w.mtr': messy,
      'cfg/dist/z.mtr': messy,
      'cfg/real.mtr': messy,
    });
    const result = await mt(dir, 'fmt', 'cfg', '--check');
    expect(result.stdout.trim().split('\n')).toEqual(['dist/z.mtr', 'real.mtr']);
  });

  it('in a config repo takes exactly the .mtr files mt check reads, nested folders named packages or dist included', async () => {
    const dir = repo({
      'connectors/open-api/a.mtr': messy,
      'connectors/open-api/packages/b.mtr': messy,
      'connectors/open-api/dist/c.mtr': messy,
      'agents/packages/d.mtr': messy,
      'connectors/node_modules/x.mtr': messy,
      'agents/.git/y.mtr': messy,
      'packages/lang/z.mtr': messy,
      'docs/w.mtr': messy,
    });
    const formatted = await mt(dir, 'fmt', '--check');
    const fmtFiles = formatted.stdout.trim().split('\n');
    expect(fmtFiles).toEqual([
      'agents/packages/d.mtr',
      'connectors/open-api/a.mtr',
      'connectors/open-api/dist/c.mtr',
      'connectors/open-api/packages/b.mtr',
    ]);
    // mt check reads the same files: the resource, and the misplaced ones as errors rather than not at all.
    const checked = JSON.parse((await mt(dir, 'check', '--json')).stdout) as {
      resources: { file: string }[];
      diagnostics: { file: string; code: string }[];
    };
    const checkFiles = new Set([...checked.resources, ...checked.diagnostics].map((entry) => entry.file));
    expect([...checkFiles].sort()).toEqual(fmtFiles);
    expect(checked.diagnostics.filter((d) => d.code === 'mtr:repo:unknown-folder').map((d) => d.file)).toEqual([
      'agents/packages/d.mtr',
      'connectors/open-api/dist/c.mtr',
      'connectors/open-api/packages/b.mtr',
    ]);
  });

  it('in a config repo formats only the resource folders, as mt check reads them, not fixtures elsewhere', async () => {
    const dir = repo({
      'connectors/open-api/a.mtr': messy,
      'agents/nested/b.mtr': messy,
      'packages/lang/test/fixtures/broken.mtr': 'method "GET"\n',
      'packages/lang/test/fixtures/messy.mtr': messy,
      'docs/example.mtr': messy,
    });
    const result = await mt(dir, 'fmt', '--check');
    expect(result.code).toBe(1);
    expect(result.stdout.trim().split('\n')).toEqual(['agents/nested/b.mtr', 'connectors/open-api/a.mtr']);
    expect(result.stderr).not.toContain('broken.mtr');
    // A folder that is no config repo is formatted whole, as asked.
    const fixtures = await mt(join(dir, 'packages/lang/test/fixtures'), 'fmt', '--check');
    expect(fixtures.stdout.trim()).toBe('messy.mtr');
    expect(fixtures.stderr).toContain('broken.mtr:1:8 error');
  });

  it('prints syntax errors compiler-style on stderr, exits 1, and leaves that file untouched', async () => {
    const broken = 'method "GET"\nurl = "https://api.example.com"\n';
    const dir = repo({ 'broken.mtr': broken, 'ok.mtr': messy });
    const result = await mt(dir, 'fmt');
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      'broken.mtr:1:8 error mtr:syntax:unexpected-token expected `=` after the key `method`, found `"GET"`',
    );
    expect(result.stderr).toContain('    1 | method "GET"\n      |        ^^^^^');
    expect(read(dir, 'broken.mtr')).toBe(broken);
    expect(read(dir, 'ok.mtr')).toBe(tidy);
  });

  it('prints { files: [{ file, changed }] } with --json', async () => {
    const dir = repo({ 'a.mtr': messy, 'b.mtr': tidy });
    const result = await mt(dir, 'fmt', '--check', '--json');
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toEqual({
      files: [
        { file: 'a.mtr', changed: true },
        { file: 'b.mtr', changed: false },
      ],
    });
  });

  it('reports a directory that does not exist as a user error', async () => {
    const dir = repo({});
    const result = await mt(dir, 'fmt', 'missing');
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('cannot read missing');
  });
});
