import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

// Every package as npm would publish it: its tarball carries the license text, and its package.json says
// where the project lives (docs/decisions.md: the project's home) and under which license.
const root = fileURLToPath(new URL('../', import.meta.url));
const HOME = 'https://github.com/maitento/maitento';
// Every npm workspace: the packages and the VS Code extension (editors/vscode).
const packageDirs: string[] = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).workspaces;

interface Packed {
  name: string;
  files: { path: string }[];
}
let packed: Packed[];

beforeAll(() => {
  // One `npm pack --dry-run` over every workspace (scripts are not run: nothing is built or written).
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--workspaces', '--ignore-scripts'], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  packed = JSON.parse(out) as Packed[];
});

describe('the packages', () => {
  it('each packs its LICENSE', () => {
    const names = packageDirs.map((dir) => JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8')).name);
    expect(packed.map((p) => p.name).sort()).toEqual(names.sort());
    for (const pack of packed) {
      expect(
        pack.files.map((f) => f.path),
        pack.name,
      ).toContain('LICENSE');
    }
  });

  it.each(['.', ...packageDirs])('%s/package.json names the license, repository, homepage and issues', (dir) => {
    const manifest = JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8'));
    expect(manifest.license).toBe('Apache-2.0');
    expect(manifest.repository).toEqual({
      type: 'git',
      url: `git+${HOME}.git`,
      ...(dir === '.' ? {} : { directory: dir }),
    });
    expect(manifest.homepage).toBe(dir === '.' ? `${HOME}#readme` : `${HOME}/tree/main/${dir}#readme`);
    expect(manifest.bugs).toEqual({ url: `${HOME}/issues` });
  });

  it('ships the Apache-2.0 text as LICENSE at the root and in every package', () => {
    for (const dir of ['.', ...packageDirs]) {
      expect(readFileSync(join(root, dir, 'LICENSE'), 'utf8'), dir).toContain('Apache License');
    }
  });
});
