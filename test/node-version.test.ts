import { execFileSync, spawnSync } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// issue #22: on a Node.js older than `engines` allows, `npm install` in a clone stops before it installs
// anything, with a short error that says what to do (`source scripts/node.sh`), not a warning per package.
// The machine running the tests has a recent Node.js, so npm (the real CLI, the one on PATH) is started
// with `process.version` set to an older one: npm's engine check reads exactly that.
const root = fileURLToPath(new URL('../', import.meta.url));
const npmCli = realpathSync(execFileSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8' }).trim());

function npmInstallAs(nodeVersion: string) {
  const script = `Object.defineProperty(process, 'version', { value: ${JSON.stringify(nodeVersion)} });
process.argv = [process.argv[0], ${JSON.stringify(npmCli)}, 'install', '--dry-run', '--offline', '--no-audit', '--no-fund'];
require(${JSON.stringify(npmCli)});`;
  return spawnSync(process.execPath, ['-e', script], { cwd: root, encoding: 'utf8', timeout: 60_000 });
}

describe('npm install on a Node.js that is too old', () => {
  it.each(['v20.20.2', 'v22.18.0'])('stops at once on %s with one line naming source scripts/node.sh', (version) => {
    const res = npmInstallAs(version);
    expect(res.status).not.toBe(0);
    const lines = res.stderr.split('\n').filter((l) => l.startsWith('npm error'));
    expect(lines[0]).toBe('npm error code EBADENGINE');
    // A handful of lines, not one per package; and one of them says what to do.
    expect(lines.length).toBeLessThan(10);
    expect(res.stderr).not.toMatch(/npm warn EBADENGINE/);
    expect(lines.filter((l) => l.includes('source scripts/node.sh'))).toHaveLength(1);
    expect(res.stderr).toContain(`"node":"${version}"`);
  });
});

// issue #45: `mt` on a Node.js older than `engines` allows says so in one line (what it needs, what to run)
// and exits 1, rather than a SyntaxError from an import the old Node.js lacks. Run with the machine's own
// Node.js 20 when there is one (the README's warning case); without one the test says so and has nothing to run.
const mtBin = fileURLToPath(new URL('../packages/cli/bin/mt.js', import.meta.url));
const oldNode = ['/usr/bin/node', '/bin/node', '/usr/local/bin/node'].find((path) => {
  const res = spawnSync(path, ['--version'], { encoding: 'utf8' });
  return res.status === 0 && /^v(1\d|20|21|22\.(1[0-8]|\d))\./.test(res.stdout.trim()) && res.stdout.trim();
});

describe('mt on a Node.js that is too old', () => {
  it.runIf(oldNode)('mt --version prints one line naming the required version and what to run, exit 1', () => {
    const res = spawnSync(oldNode as string, [mtBin, '--version'], { encoding: 'utf8', timeout: 30_000 });
    expect(res.status).toBe(1);
    expect(res.stdout).toBe('');
    const lines = res.stderr.split('\n').filter(Boolean);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^mt: needs Node\.js 22\.19 or newer .*source <your clone>\/scripts\/node\.sh/);
    expect(lines[0]).not.toMatch(/SyntaxError/);
  });

  it('the version mt.js requires is the one engines names', async () => {
    const { readFileSync } = await import('node:fs');
    const pkg = JSON.parse(readFileSync(new URL('../packages/cli/package.json', import.meta.url), 'utf8'));
    const bin = readFileSync(mtBin, 'utf8');
    const [, major, minor] = /const REQUIRED = \[(\d+), (\d+)\]/.exec(bin) ?? [];
    expect(pkg.engines.node).toBe(`>=${major}.${minor}`);
  });
});
