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
