import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
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

// The modules a process ran: a file of the CLI's bundle (packages/cli/dist/bundle) stands for the modules esbuild put
// into it, as its metafile (dist/bundle/meta.json, paths relative to packages/cli) lists them, so a test of what a
// command loads still sees TypeBox or undici when they are bundled into a chunk it loads.
const cliDir = join(root, 'packages/cli/');
const meta = JSON.parse(readFileSync(join(cliDir, 'dist/bundle/meta.json'), 'utf8')) as {
  outputs: Record<string, { inputs: Record<string, unknown> }>;
};
function modulesIn(urls: string[]): string[] {
  return urls.flatMap((url) => {
    if (!url.startsWith('file:')) return [url];
    const output = meta.outputs[relative(cliDir, fileURLToPath(url))];
    return output === undefined
      ? [url]
      : Object.keys(output.inputs).map((input) => pathToFileURL(join(cliDir, input)).href);
  });
}

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
    // bin/mt.js enables it before its imports: every file of the CLI's bundle that `mt --version` loads (its entry
    // point and a dozen chunks) is in it, not only a few of Node.js's.
    const bundleFiles = (await loaded(['--version'])).filter((url) => url.includes('/packages/cli/dist/bundle/'));
    expect(bundleFiles.length).toBeGreaterThan(5);
    expect(files.length).toBeGreaterThanOrEqual(bundleFiles.length);
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
  it('mt --help and a command that calls the API load no TypeBox (the SDK through @maitento/sdk/client)', async () => {
    const help = modulesIn(await loaded(['--help']));
    expect(help.some((url) => url.includes('/packages/cli/dist/commands/key-list.js'))).toBe(true);
    expect(help.filter((url) => url.includes('/typebox/'))).toEqual([]);
    // A server nobody listens on: the command fails after loading everything it needs.
    const keyList = modulesIn(await loaded(['key-list'], { MT_API_URL: 'http://127.0.0.1:9', MT_API_KEY: 'mt_x' }));
    expect(keyList.some((url) => url.includes('/packages/sdk/dist/client.js'))).toBe(true);
    expect(keyList.filter((url) => url.includes('/typebox/'))).toEqual([]);
    // Nor the undici package (Node.js's own fetch is http-fetch.test.ts's).
    expect(keyList.filter((url) => url.includes('/node_modules/undici/'))).toEqual([]);
  });

  it('loads the bundle (a dozen files), not the ~120 modules of dist', async () => {
    const help = (await loaded(['--help'])).filter((url) => url.startsWith('file:'));
    expect(help.filter((url) => !url.includes('/packages/cli/dist/bundle/'))).toEqual([pathToFileURL(mtBin).href]);
    expect(help.length).toBeLessThan(30);
  });

  it("the bundle keeps the server's lazy imports lazy: the AI SDK, the MCP SDK, PGlite and unpdf", () => {
    // What loading the server's chunk loads with it (its static imports, transitively), from the metafile.
    type Output = { inputs: Record<string, unknown>; imports: { path: string; kind: string; external?: boolean }[] };
    const outputs = meta.outputs as Record<string, Output>;
    const server = Object.keys(outputs).filter((key) =>
      Object.keys(outputs[key]?.inputs ?? {}).includes('../server/dist/index.js'),
    );
    expect(server).toHaveLength(1);
    const closure = new Set<string>();
    const visit = (key: string): void => {
      if (closure.has(key)) return;
      closure.add(key);
      for (const imported of outputs[key]?.imports ?? []) {
        if (imported.kind === 'import-statement' && !imported.external) visit(imported.path);
      }
    };
    visit(server[0] as string);
    const inputs = [...closure].flatMap((key) => Object.keys(outputs[key]?.inputs ?? {}));
    const lazy = /\/node_modules\/(ai|@ai-sdk\/[^/]+|@modelcontextprotocol\/sdk|html-to-text)\//;
    expect(inputs.filter((input) => lazy.test(input))).toEqual([]);
    const externals = [...closure].flatMap((key) =>
      (outputs[key]?.imports ?? []).filter((i) => i.external && !isBuiltin(i.path)),
    );
    expect(externals.filter((i) => i.kind === 'import-statement').map((i) => i.path)).toEqual([]);
    // The control: the bundle has them, in chunks the server imports on first use; PGlite and unpdf (files of their
    // own beside their modules) stay packages, imported from node_modules on first use.
    const all = Object.values(outputs).flatMap((output) => Object.keys(output.inputs));
    expect(all.some((input) => input.includes('/node_modules/@modelcontextprotocol/sdk/'))).toBe(true);
    expect(all.some((input) => input.includes('/node_modules/ai/'))).toBe(true);
    const dynamic = Object.values(outputs).flatMap((output) =>
      output.imports.filter((i) => i.external && !isBuiltin(i.path)),
    );
    expect(new Set(dynamic.map((i) => `${i.kind} ${i.path}`))).toEqual(
      // pg-native: pg's optional native binding, required only by `pg.native`, which nothing uses. unpdf is not
      // imported by the bundle: a document is read in a worker thread that runs @maitento/server's
      // dist/knowledge/extract-worker.js, which imports it (docs/knowledge-bases.md, "Budgets").
      new Set(['dynamic-import @electric-sql/pglite', 'require-call pg-native']),
    );
  });
});
