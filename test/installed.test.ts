import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyProject, PACKED, packedInstall, userEnv } from './support/packed.js';

// issue #22: the CLI and the SDK used from one's own project, as docs/sdk.md and docs/cli.md say until they
// are published: `npm pack` the packages, `npm install` the tarballs into a folder outside the clone. That install
// is made once a suite run (test/support/packed.ts, shared with test/tutorials.test.ts); this file copies its
// project into a folder of its own and runs what a user runs there.
const root = fileURLToPath(new URL('../', import.meta.url));
const tsc = join(root, 'node_modules/typescript/bin/tsc');
let project: string;

// Asynchronous, so that vitest's worker keeps answering while npm and tsc work.
function run(cmd: string, args: string[], extraEnv: Record<string, string> = {}) {
  return new Promise<{ status: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      cmd,
      args,
      { cwd: project, env: { ...userEnv, ...extraEnv }, timeout: 120_000 },
      (error, stdout, stderr) => {
        resolve({ status: error ? Number(error.code ?? 1) || 1 : 0, stdout, stderr });
      },
    );
  });
}

// One script, as ESM (.mts) and as CommonJS (.cts, which tsc compiles to `require`): a 404 from a small server
// of the script's own comes back as the SDK's typed error with its code.
const SCRIPT = `import { createServer } from 'node:http';
import { Maitento, NotFoundError } from '@maitento/sdk';

async function main() {
  const server = createServer((req, res) => {
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: 'No run nope', code: 'api:runs:not-found' }));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  const { port } = server.address() as { port: number };
  const mt = new Maitento({ baseUrl: 'http://127.0.0.1:' + port, apiKey: 'mt_test', maxRetries: 0 });
  try {
    await mt.interactionRuns.get('nope');
  } catch (error) {
    console.log(JSON.stringify({ notFound: error instanceof NotFoundError, code: (error as NotFoundError).code }));
  }
  server.close();
}
void main();
`;

beforeAll(async () => {
  const install = await packedInstall();
  project = mkdtempSync(join(tmpdir(), 'mt-installed-'));
  await copyProject(install, project);
}, 360_000);

afterAll(() => {
  if (project) rmSync(project, { recursive: true, force: true });
});

describe('the packed CLI and SDK installed into a project of their own', () => {
  it('installs from the tarballs alone, nothing linked back to the clone', () => {
    const manifest = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8'));
    expect(Object.keys(manifest.dependencies).sort()).toEqual(PACKED.map((p) => `@maitento/${p}`).sort());
    for (const spec of Object.values(manifest.dependencies)) expect(spec).toMatch(/^file:.*\.tgz$/);
    const lock = readFileSync(join(project, 'package-lock.json'), 'utf8');
    expect(lock).not.toContain(root);
  });

  it('npx mt --help lists the commands', async () => {
    const res = await run('npx', ['mt', '--help']);
    expect(res.stderr).toBe('');
    expect(res.status).toBe(0);
    expect(res.stdout).toMatch(/^Usage: mt /);
    expect(res.stdout).toContain('check');
    expect(res.stdout).toContain('deploy');
  });

  it('npx mt check compiles the example config repo', async () => {
    const res = await run('npx', ['mt', 'check', root], { MT_PUBLIC_URL: 'http://127.0.0.1:8080' });
    expect(res.status).toBe(0);
    expect(res.stdout + res.stderr).toMatch(/ok: \d+ resources checked, 0 errors, 0 warnings/);
  });

  it('runs an SDK script as ESM and as CommonJS, type-checked under node16 and bundler resolution', async () => {
    writeFileSync(join(project, 'esm.mts'), SCRIPT);
    writeFileSync(join(project, 'cjs.cts'), SCRIPT);
    writeFileSync(join(project, 'app.ts'), SCRIPT);
    const base = { strict: true, target: 'es2022', lib: ['es2022', 'dom'], types: ['node'], skipLibCheck: true };
    // @types/node for node:http, from the clone (a project would have its own).
    mkdirSync(join(project, 'node_modules/@types'), { recursive: true });
    execFileSync('cp', ['-r', join(root, 'node_modules/@types/node'), join(project, 'node_modules/@types/node')]);
    execFileSync('cp', ['-r', join(root, 'node_modules/undici-types'), join(project, 'node_modules/undici-types')]);
    const configs = {
      'tsconfig.node16.json': {
        compilerOptions: { ...base, module: 'node16', moduleResolution: 'node16', outDir: 'out' },
        files: ['esm.mts', 'cjs.cts'],
      },
      'tsconfig.bundler.json': {
        compilerOptions: { ...base, module: 'preserve', moduleResolution: 'bundler', noEmit: true },
        files: ['app.ts'],
      },
    };
    // Both checks at once: tsc is most of this test's time.
    const checks = Object.entries(configs).map(async ([file, config]) => {
      writeFileSync(join(project, file), JSON.stringify(config));
      return { file, ...(await run(process.execPath, [tsc, '-p', file])) };
    });
    for (const res of await Promise.all(checks)) {
      expect(res.stdout + res.stderr, res.file).toBe('');
      expect(res.status, res.file).toBe(0);
    }
    expect(readFileSync(join(project, 'out/cjs.cjs'), 'utf8')).toContain('require("@maitento/sdk")');
    for (const script of ['out/esm.mjs', 'out/cjs.cjs']) {
      const res = await run(process.execPath, [script]);
      expect(res.stderr, script).toBe('');
      expect(JSON.parse(res.stdout), script).toEqual({ notFound: true, code: 'api:runs:not-found' });
    }
  }, 120_000);
});
