import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from '../support/harness.js';

// A real earlier release of Maitento, built from this repository's git history, for the rolling-upgrade test
// (test/e2e/upgrades-previous-release.test.ts, docs/testing.md "The previous release"). It is the tree of one commit
// (`git archive`), given node_modules and built with its own `npm run build`, in a folder under the OS's temp dir
// keyed by the commit and by what its node_modules come from, so a machine prepares it once.
//
// node_modules: when every package the old lock file installs is in this repository's lock file at the same version
// and integrity, the old tree's node_modules is made of symlinks to this repository's installed packages, and its
// workspace links point into the old tree itself (so its `@maitento/*` are the old release's). Otherwise `npm ci`
// installs the old lock file from the registry (minutes, once per machine).

const exec = promisify(execFile);

/** Where a prepared release lives, and its `mt` executable. */
export interface PreviousRelease {
  commit: string;
  dir: string;
  /** `packages/cli/bin/mt.js` of that release. */
  mt: string;
  /** How its node_modules were made: `linked` (this repository's packages) or `installed` (`npm ci`). */
  modules: 'linked' | 'installed';
}

interface LockEntry {
  version?: string;
  integrity?: string;
  resolved?: string;
  link?: boolean;
  optional?: boolean;
}
type Lock = { packages: Record<string, LockEntry> };

/** The commit that added `file` (on the first-parent line: a merge that brought it counts), then its first parent. */
export async function commitBefore(file: string): Promise<string> {
  const git = (args: string[]) => exec('git', args, { cwd: ROOT }).then((r) => r.stdout.trim());
  const shallow = await git(['rev-parse', '--is-shallow-repository']);
  if (shallow === 'true')
    throw new Error('this clone is shallow: the previous release is built from git history (git fetch --unshallow)');
  const added = (await git(['log', '--first-parent', '--diff-filter=A', '--format=%H', 'HEAD', '--', file])).split(
    '\n',
  )[0];
  if (!added) throw new Error(`no commit adds ${file}`);
  return git(['rev-parse', `${added}^1`]);
}

/**
 * Whether the old lock file's packages are all installed here at the same version and integrity: then the old
 * tree may use this repository's node_modules. Returns the reason when it may not.
 */
export function linkable(oldLock: Lock, lock: Lock): string | undefined {
  for (const [path, entry] of Object.entries(oldLock.packages)) {
    if (path === '' || entry.link || !path.includes('node_modules/')) continue;
    // An optional package of another platform (a native binary): npm installs neither here nor there.
    if (entry.optional && !existsSync(join(ROOT, path))) continue;
    const here = lock.packages[path];
    if (!here || here.link || here.version !== entry.version || here.integrity !== entry.integrity)
      return `${path} ${entry.version} is not installed here as it is in the old lock file`;
    if (!existsSync(join(ROOT, path))) return `${path} is not installed in ${ROOT}`;
  }
  return undefined;
}

/** Makes `dir`'s node_modules from this repository's installed packages and the old tree's own workspace links. */
async function linkModules(dir: string, oldLock: Lock): Promise<void> {
  for (const [path, entry] of Object.entries(oldLock.packages)) {
    if (path === '' || (entry.optional && !existsSync(join(ROOT, path)))) continue;
    const at = join(dir, path);
    // Only the first node_modules level of the root and of each workspace: deeper packages live inside those.
    const parts = path.split('node_modules/');
    if (parts.length !== 2) continue;
    await mkdir(dirname(at), { recursive: true });
    if (entry.link) {
      if (!entry.resolved) continue;
      // Relative, as npm makes them: the folder is prepared under another name and then renamed.
      await symlink(relative(dirname(at), join(dir, entry.resolved)), at);
    } else if (path.includes('node_modules/')) await symlink(join(ROOT, path), at);
  }
  // The executables of the packages (tsc and the like), at the root and of a workspace with packages of its own.
  for (const bin of new Set(
    Object.keys(oldLock.packages)
      .filter((path) => path.split('node_modules/').length === 2)
      .map((path) => `${path.slice(0, path.indexOf('node_modules/'))}node_modules/.bin`),
  ))
    if (existsSync(join(ROOT, bin))) await symlink(join(ROOT, bin), join(dir, bin));
}

/** Runs a command in `cwd` with the Node.js running this process first on PATH; rejects with its output. */
function run(command: string, args: string[], cwd: string, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`, CI: '1' };
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => {
      output += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      output += c.toString();
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${command} ${args.join(' ')} did not finish in ${timeoutMs} ms:\n${output.slice(-4000)}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`${command} ${args.join(' ')} exited with ${code}:\n${output.slice(-4000)}`));
    });
  });
}

/**
 * The release at `commit`, built: prepared in a temporary folder (archive, node_modules, `npm run build`) unless a
 * folder of the same key is ready. Each step is bounded: the build by `buildMs`, an `npm ci` by `installMs`.
 */
export async function preparePreviousRelease(
  commit: string,
  options: { buildMs?: number; installMs?: number } = {},
): Promise<PreviousRelease> {
  const lockText = readFileSync(join(ROOT, 'package-lock.json'), 'utf8');
  const oldLockText = (await exec('git', ['show', `${commit}:package-lock.json`], { cwd: ROOT, maxBuffer: 64 << 20 }))
    .stdout;
  const oldLock = JSON.parse(oldLockText) as Lock;
  const refused = linkable(oldLock, JSON.parse(lockText) as Lock);
  const modules = refused === undefined ? ('linked' as const) : ('installed' as const);
  // Linked modules depend on this checkout (its path and its lock file); installed ones only on the commit.
  const key = createHash('sha256')
    .update(modules === 'linked' ? `${commit}\n${ROOT}\n${lockText}` : commit)
    .digest('hex')
    .slice(0, 16);
  const dir = join(tmpdir(), `mt-previous-release-${commit.slice(0, 12)}-${key}`);
  const mt = join(dir, 'packages/cli/bin/mt.js');
  if (existsSync(join(dir, '.mt-prepared'))) return { commit, dir, mt, modules };

  const work = await mkdtemp(`${dir}.partial-`);
  try {
    const archive = join(work, '.archive.tar');
    await exec('git', ['archive', '--format=tar', '-o', archive, commit], { cwd: ROOT });
    await exec('tar', ['-xf', archive, '-C', work]);
    await rm(archive);
    if (modules === 'linked') await linkModules(work, oldLock);
    else await run('npm', ['ci', '--no-audit', '--no-fund'], work, options.installMs ?? 300_000);
    await run('npm', ['run', 'build'], work, options.buildMs ?? 180_000);
    await writeFile(
      join(work, '.mt-prepared'),
      `${JSON.stringify({ commit, modules, ...(refused ? { refused } : {}) })}\n`,
    );
    // Another test process may have prepared the same folder meanwhile: either copy is whole.
    await rename(work, dir).catch(async (error: NodeJS.ErrnoException) => {
      if (!existsSync(join(dir, '.mt-prepared'))) throw error;
      await rm(work, { recursive: true, force: true });
    });
  } catch (error) {
    await rm(work, { recursive: true, force: true });
    throw error;
  }
  return { commit, dir, mt, modules };
}
