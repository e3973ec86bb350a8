import { execFile } from 'node:child_process';
import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ROOT } from '../e2e/support/harness.js';

// The CLI and every workspace it depends on (the testkit is for tests only), as docs/cli.md packs them.
export const PACKED = ['errors', 'egress', 'lang', 'gateway', 'store', 'engine', 'server', 'sdk', 'cli'];

/** The environment variable naming the suite run's own folder (test/global-setup.ts makes it and removes it). */
export const RUN_DIR_ENV = 'MT_TEST_RUN_DIR';

/** How long a file waits for the install another file of the run is making (npm pack and install: ~20 s here). */
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
 * Does what tutorial 1's "Before you start" tells the reader to (and docs/cli.md a user): packs the packages
 * into `<place>/maitento-packages`, makes `<place>/project` a project of its own (`"type": "module"`) and runs
 * `npm install` of the tarballs there (npm's cache first).
 */
async function packAndInstall(place: string): Promise<void> {
  const tarballs = join(place, 'maitento-packages');
  await mkdir(tarballs, { recursive: true });
  const workspaces = PACKED.flatMap((name) => ['-w', `@maitento/${name}`]);
  const packed = JSON.parse(
    await run('npm', ['pack', '--json', '--pack-destination', tarballs, ...workspaces], ROOT),
  ) as {
    filename: string;
  }[];
  const project = join(place, 'project');
  await mkdir(project);
  await writeFile(join(project, 'package.json'), '{ "private": true, "type": "module" }\n');
  await run(
    'npm',
    ['install', '--prefer-offline', '--no-audit', '--no-fund', ...packed.map((p) => join(tarballs, p.filename))],
    project,
  );
}

/**
 * The packed install of this suite run: a folder with `project/` (its package.json, package-lock.json and
 * node_modules as `npm install` of the tarballs left them) and `maitento-packages/` (the tarballs). It is made
 * once a run: test/installed.test.ts and test/tutorials.test.ts both need it, and each install took ~15 s and
 * ~20 s of CPU. The first file to ask makes it (an atomic `mkdir` of the lock names the maker), aside and renamed
 * into place when whole; a file that asks meanwhile waits for it, for at most 5 minutes, and a failed install is
 * reported to every file that asks, with npm's message. Nobody writes in it afterwards: a file copies the project
 * into a folder of its own ({@link copyProject}).
 */
export async function packedInstall(): Promise<string> {
  const runDir = process.env[RUN_DIR_ENV];
  if (runDir === undefined)
    throw new Error(`${RUN_DIR_ENV} is not set: run the tests with vitest (test/global-setup.ts)`);
  const done = join(runDir, 'packed-install');
  const failed = join(runDir, 'packed-install.failed');
  let maker = false;
  try {
    await mkdir(join(runDir, 'packed-install.lock'));
    maker = true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  if (maker) {
    const making = join(runDir, 'packed-install.making');
    try {
      await packAndInstall(making);
      await rename(making, done);
    } catch (error) {
      await writeFile(failed, (error as Error).message);
      throw error;
    }
    return done;
  }
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    if (await exists(done)) return done;
    if (await exists(failed)) throw new Error(`the packed install failed:\n${await readFile(failed, 'utf8')}`);
    if (Date.now() > deadline)
      throw new Error(`the packed install another test file is making did not end in ${WAIT_MS / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
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
