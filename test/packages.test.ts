import { execFile, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { packedTarballs } from './support/packed.js';

// Every package as npm would publish it: its tarball carries the license text, and its package.json says
// where the project lives (docs/decisions/0021-standards-as-other-tools-read-them.md: the project's home) and under which license.
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

// The packages as other people's tools read them (issue #23): "are the types wrong" and publint, each packing
// the package itself. The SDK is checked for every resolution (CommonJS under node16 included); the CLI is an
// ES module with an executable, so for ESM resolutions only.
function tool(bin: string, args: string[]) {
  return new Promise<{ ok: boolean; out: string }>((resolve) => {
    execFile(join(root, 'node_modules/.bin', bin), args, { cwd: root, timeout: 90_000 }, (error, stdout, stderr) => {
      resolve({ ok: !error, out: `${stdout}${stderr}` });
    });
  });
}

// The tarballs a user installs (npm pack, made once a suite run: test/support/packed.ts), as attw and publint would
// pack them themselves.
describe('attw and publint --strict on the packed tarballs', () => {
  it.each([
    ['@maitento/sdk', []],
    ['@maitento/cli', ['--profile', 'esm-only']],
  ])(
    '%s: no problems',
    async (name, profile) => {
      const tarball = (await packedTarballs())[name];
      expect(tarball).toMatch(/\.tgz$/);
      const [attw, publint] = await Promise.all([
        tool('attw', [tarball, '--format', 'ascii', ...profile]),
        tool('publint', ['run', tarball, '--strict']),
      ]);
      expect(attw.ok, attw.out).toBe(true);
      // Each problem attw finds is a line with a warning sign; for the CLI only the CommonJS one, which its
      // profile ignores (it is an ES module), may be there.
      if (profile.length === 0) expect(attw.out).toContain('No problems found');
      const problems = attw.out.split('\n').filter((line) => /⚠️|❌|🔴|💀|🥴|🐛|❗️|🚭/u.test(line));
      for (const line of problems) {
        expect(line).toMatch(
          /^(\(ignored per resolution\) ⚠️ A require call resolved|node16 \(from CJS\): \(ignored\))/,
        );
      }
      expect(publint.out).toContain('All good!');
      expect(publint.ok, publint.out).toBe(true);
    },
    120_000,
  );
});
