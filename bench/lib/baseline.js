// A baseline commit's tree for a bench to measure beside this checkout in the same run: `git archive` of the commit
// into .bench-cache/<commit> (ignored by git and biome), its own node_modules from its lock file (`npm ci`, whose
// `prepare` builds it). Made once: a rerun finds the tree ready.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The tree of `commit`, built, as `{ root, sha }`; throws with the reason (git's or npm's output) when it cannot be made. */
export function baselineTree(commit) {
  const sha = execFileSync('git', ['rev-parse', '--verify', `${commit}^{commit}`], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
  }).trim();
  const root = join(REPO_ROOT, '.bench-cache', commit);
  const ready = join(root, '.bench-ready');
  if (existsSync(ready) && readFileSync(ready, 'utf8').trim() === sha) return { root, sha };
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  console.error(`bench: making the tree of ${commit} in ${root} (git archive, npm ci, build)`);
  const archive = spawnSync('sh', ['-c', `git archive ${sha} | tar -x -C "${root}"`], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
  });
  if (archive.status !== 0) throw new Error(`git archive ${commit} failed: ${archive.stderr}`);
  // The npm of this run, without the variables `npm run` set for this checkout.
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !/^npm_(package|lifecycle|config_local_prefix)|^INIT_CWD$/.test(k)),
  );
  const npm = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: root, env, encoding: 'utf8' });
  if (npm.status !== 0) {
    throw new Error(
      `npm ci (and its build) of ${commit} failed: ${`${npm.stdout}\n${npm.stderr}`.trim().slice(-1500)}`,
    );
  }
  writeFileSync(ready, `${sha}\n`);
  return { root, sha };
}
