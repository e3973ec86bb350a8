import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ROOT } from '../e2e/support/harness.js';

// The CLI and every workspace it depends on (the testkit is for tests only), as docs/cli.md packs them.
const PACKAGES = ['errors', 'egress', 'lang', 'gateway', 'store', 'engine', 'server', 'sdk', 'cli'];

// npm run by the tests of a `npm test` passes its settings on as npm_config_*: a reader's shell has none.
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.toLowerCase().startsWith('npm_')));

function npm(args: string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('npm', args, { cwd, env, timeout: 240_000, maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`npm ${args.join(' ')} failed:\n${stderr}`));
      else resolve(stdout);
    });
  });
}

/**
 * Does what tutorial 1's "Before you start" tells the reader to: packs the packages into `tarballs`, then makes
 * `folder` a project of its own (`"type": "module"`) and installs the tarballs there (npm's cache first).
 */
export async function installTutorialFolder(folder: string, tarballs: string): Promise<void> {
  await mkdir(tarballs, { recursive: true });
  const workspaces = PACKAGES.flatMap((name) => ['-w', `@maitento/${name}`]);
  const packed = JSON.parse(await npm(['pack', '--json', '--pack-destination', tarballs, ...workspaces], ROOT)) as {
    filename: string;
  }[];
  await mkdir(folder, { recursive: true });
  await writeFile(join(folder, 'package.json'), '{ "private": true, "type": "module" }\n');
  await npm(
    ['install', '--prefer-offline', '--no-audit', '--no-fund', ...packed.map((p) => join(tarballs, p.filename))],
    folder,
  );
}
