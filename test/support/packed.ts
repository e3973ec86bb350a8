import { execFile } from 'node:child_process';
import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ROOT } from '../e2e/support/harness.js';

// The CLI and every workspace it depends on (the testkit is for tests only), as docs/cli.md packs them.
export const PACKED = ['errors', 'egress', 'lang', 'gateway', 'store', 'engine', 'server', 'sdk', 'cli'];

/** The environment variable naming the suite run's own folder (test/global-setup.ts makes it and removes it). */
export const RUN_DIR_ENV = 'MT_TEST_RUN_DIR';

/** How long a file waits for what another file of the run is making (npm pack and install: ~20 s here). */
const WAIT_MS = 300_000;

// npm run by the tests of a `npm test` passes its settings on as npm_config_*: a reader's shell has none.
export const userEnv = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => !k.toLowerCase().startsWith('npm_')),
);

function run(command: string, args: string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd, env: userEnv, timeout: 240_000, maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${command} ${args.join(' ')} failed:\n${stderr}`));
      else resolve(stdout);
    });
  });
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/**
 * Makes `name` once in this suite run's folder and returns its path: the first file to ask makes it (an atomic
 * `mkdir` of `<name>.lock` names the maker), aside in `<name>.making` and renamed into place when whole; a file
 * that asks meanwhile waits for it, at most 5 minutes, and a failure is reported to every file that asks, with
 * its message. Nobody writes in what was made afterwards.
 */
export async function onceARun(
  name: string,
  make: (folder: string) => Promise<void>,
  waitMs = WAIT_MS,
): Promise<string> {
  const runDir = process.env[RUN_DIR_ENV];
  if (runDir === undefined)
    throw new Error(`${RUN_DIR_ENV} is not set: run the tests with vitest (test/global-setup.ts)`);
  const done = join(runDir, name);
  const failed = join(runDir, `${name}.failed`);
  let maker = false;
  try {
    await mkdir(join(runDir, `${name}.lock`));
    maker = true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  if (maker) {
    const making = join(runDir, `${name}.making`);
    try {
      await mkdir(making);
      await make(making);
      await rename(making, done);
    } catch (error) {
      await writeFile(failed, (error as Error).message);
      throw error;
    }
    return done;
  }
  const deadline = Date.now() + waitMs;
  for (;;) {
    if (await exists(done)) return done;
    if (await exists(failed))
      throw new Error(`${name} failed in another test file:\n${await readFile(failed, 'utf8')}`);
    if (Date.now() > deadline)
      throw new Error(`${name}, made by another test file, was not ready in ${waitMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/**
 * The packages as tarballs, as tutorial 1's "Before you start" and docs/cli.md have a user make them: `npm pack`
 * of {@link PACKED} into a folder, made once a suite run ({@link onceARun}). Returns the tarballs' paths by
 * package name (`@maitento/sdk` → …/maitento-sdk-0.1.0.tgz).
 */
export async function packedTarballs(): Promise<Record<string, string>> {
  const folder = await onceARun('packed-tarballs', async (making) => {
    const workspaces = PACKED.flatMap((name) => ['-w', `@maitento/${name}`]);
    const out = await run('npm', ['pack', '--json', '--pack-destination', making, ...workspaces], ROOT);
    const packed = JSON.parse(out) as { name: string; filename: string }[];
    await writeFile(join(making, 'packed.json'), JSON.stringify(packed));
  });
  const packed = JSON.parse(await readFile(join(folder, 'packed.json'), 'utf8')) as {
    name: string;
    filename: string;
  }[];
  return Object.fromEntries(packed.map((p) => [p.name, join(folder, p.filename)]));
}

/**
 * The packed install of this suite run: a folder whose `project/` holds package.json, package-lock.json and
 * node_modules as `npm install` of the tarballs left them in a project of its own (`"type": "module"`, npm's cache
 * first), as tutorial 1 has the reader do. Made once a run ({@link onceARun}): test/installed.test.ts and
 * test/tutorials.test.ts both need it, and each install took ~15 s and ~20 s of CPU. A file copies the project
 * into a folder of its own ({@link copyProject}).
 */
export async function packedInstall(): Promise<string> {
  const tarballs = Object.values(await packedTarballs());
  return onceARun('packed-install', async (making) => {
    const project = join(making, 'project');
    await mkdir(project);
    await writeFile(join(project, 'package.json'), '{ "private": true, "type": "module" }\n');
    await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', ...tarballs], project);
  });
}

/**
 * Copies the packed install's project into `folder` (made if missing): its package.json, package-lock.json and
 * node_modules, the latter's files hard-linked (`cp -al`: no file is copied, every folder is a real one of its
 * own), so the copy resolves modules exactly as the install did and what a test adds there stays there.
 */
export async function copyProject(install: string, folder: string): Promise<void> {
  await mkdir(folder, { recursive: true });
  const project = join(install, 'project');
  await run('cp', ['-al', join(project, 'node_modules'), folder], folder);
  // The two files a test may write again are copies, not links into the shared install.
  await run('cp', [join(project, 'package.json'), join(project, 'package-lock.json'), folder], folder);
}
