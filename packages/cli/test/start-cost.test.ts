import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

// What an `mt` process costs before it does anything (issue #22): the suite starts hundreds of them.
const root = fileURLToPath(new URL('../../../', import.meta.url));
const mtBin = join(root, 'packages/cli/bin/mt.js');
const scratch = mkdtempSync(join(tmpdir(), 'mt-start-cost-'));

function mt(
  env: Record<string, string>,
  args: string[],
  nodeArgs: string[] = [],
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...nodeArgs, mtBin, ...args],
      { cwd: scratch, env: { PATH: process.env.PATH ?? '', ...env }, timeout: 20_000 },
      (error, stdout, stderr) => {
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

// Every file under `dir`, recursively (Node.js keeps one folder per Node.js version inside the cache folder).
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => entry.name);
}

describe("mt and Node.js's compile cache", () => {
  // Through the default folder (node-compile-cache under the OS's temp dir, TMPDIR here): NODE_COMPILE_CACHE alone
  // would turn the cache on in Node.js itself, without bin/mt.js.
  it('fills node-compile-cache under the temp dir, and reuses it', async () => {
    const temp = mkdtempSync(join(scratch, 'tmp-'));
    const cache = join(temp, 'node-compile-cache');
    const first = await mt({ TMPDIR: temp }, ['--version']);
    expect(first).toMatchObject({ code: 0, stdout: '0.1.0\n' });
    const files = filesUnder(cache);
    // bin/mt.js enables it before its imports: the CLI's ~100 modules are in it, not only a few of Node.js's.
    expect(files.length).toBeGreaterThan(50);
    const second = await mt({ TMPDIR: temp }, ['--version']);
    expect(second).toMatchObject({ code: 0, stdout: '0.1.0\n' });
    expect(filesUnder(cache).length).toBe(files.length);
  });

  it('still runs the command when the folder cannot be made', async () => {
    // A path under a regular file: not even root can make that folder.
    const file = join(scratch, 'a-file');
    writeFileSync(file, '');
    expect(await mt({ TMPDIR: file }, ['--version'])).toEqual({ code: 0, stdout: '0.1.0\n', stderr: '' });
    expect(await mt({ NODE_COMPILE_CACHE: join(file, 'cache') }, ['--version'])).toEqual({
      code: 0,
      stdout: '0.1.0\n',
      stderr: '',
    });
  });

  it('writes nothing with NODE_DISABLE_COMPILE_CACHE=1', async () => {
    const temp = mkdtempSync(join(scratch, 'off-'));
    const result = await mt({ TMPDIR: temp, NODE_DISABLE_COMPILE_CACHE: '1' }, ['--version']);
    expect(result).toMatchObject({ code: 0, stdout: '0.1.0\n' });
    expect(filesUnder(temp)).toEqual([]);
  });
});

describe('what an mt command loads', () => {
  // A module hook that writes the URL of every module the process loads to MT_TEST_LOADED at exit.
  const hook = join(scratch, 'loaded.mjs');
  writeFileSync(
    hook,
    `import { registerHooks } from 'node:module';
import { writeFileSync } from 'node:fs';
const urls = [];
registerHooks({ load(url, context, next) { urls.push(url); return next(url, context); } });
process.on('exit', () => writeFileSync(process.env.MT_TEST_LOADED, urls.join('\\n')));
`,
  );

  async function loaded(args: string[], env: Record<string, string> = {}): Promise<string[]> {
    const out = join(scratch, `loaded-${Math.random().toString(36).slice(2)}.txt`);
    await mt({ MT_TEST_LOADED: out, NODE_DISABLE_COMPILE_CACHE: '1', ...env }, args, [
      '--import',
      pathToFileURL(hook).href,
    ]);
    return readFileSync(out, 'utf8').split('\n');
  }

  it('mt --help and a command that calls the API load no TypeBox (the SDK through @maitento/sdk/client)', async () => {
    const help = await loaded(['--help']);
    expect(help.some((url) => url.includes('/packages/cli/dist/commands/key-list.js'))).toBe(true);
    expect(help.filter((url) => url.includes('/typebox/'))).toEqual([]);
    // A server nobody listens on: the command fails after loading everything it needs.
    const keyList = await loaded(['key-list'], { MT_API_URL: 'http://127.0.0.1:9', MT_API_KEY: 'mt_x' });
    expect(keyList.some((url) => url.includes('/packages/sdk/dist/client.js'))).toBe(true);
    expect(keyList.filter((url) => url.includes('/typebox/'))).toEqual([]);
  });
});
