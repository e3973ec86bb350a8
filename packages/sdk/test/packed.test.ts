import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// `@maitento/sdk` as a user installs it: `npm pack` of packages/sdk, unpacked into node_modules of a folder
// outside the repository, so Node.js and TypeScript resolve only what the tarball holds.
const root = fileURLToPath(new URL('../../../', import.meta.url));
const sdkDir = join(root, 'packages/sdk');
let dir: string;
let tarball: string;

// Uses the README's calls against a small server of its own: a 404 with a code, a 503 then success (a retry).
const CONSUMER = `
import { createServer } from 'node:http';
import { Maitento, NotFoundError, MaitentoError } from '@maitento/sdk';

let starts = 0;
const keys = [];
const server = createServer((req, res) => {
  const send = (status, body, headers = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
  if (req.url === '/v1/runs/nope') return send(404, { error: 'No run nope', code: 'api:runs:not-found' });
  if (req.method === 'POST' && req.url === '/v1/interactions/support/runs') {
    keys.push(req.headers['idempotency-key']);
    if (++starts === 1) return send(503, { error: 'busy', code: 'api:server:unavailable' }, { 'retry-after': '0' });
    return send(201, { id: 'r1', status: 'Running' });
  }
  send(404, { error: 'no route', code: 'api:server:not-found' });
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const mt = new Maitento({ baseUrl: 'http://127.0.0.1:' + server.address().port, apiKey: 'mt_test' });
const out = {};
try {
  await mt.interactionRuns.get('nope');
} catch (error) {
  out.notFound = { isNotFound: error instanceof NotFoundError, isMaitento: error instanceof MaitentoError, code: error.code, status: error.status };
}
const run = await mt.interactionRuns.start('support', { inputs: { message: 'hi' } });
out.started = { id: run.id, attempts: starts, sameKey: keys.length === 2 && keys[0] === keys[1] && keys[0].length > 0 };
server.close();
console.log(JSON.stringify(out));
`;

const TYPED_CONSUMER = `
import { Maitento, type RunView, type Connector, type Diagnostic, RunSchema, UnprocessableEntityError } from '@maitento/sdk';

// The types are real types, not \`any\` (each line below must be an error), and the schemas are exported.
// @ts-expect-error
export const wrongRun: RunView = { id: 1 };
// @ts-expect-error
export const wrongConnector: Connector = { kind: 'tool' };
// @ts-expect-error
export const wrongDiagnostic: Diagnostic = { severity: 'fatal' };
export const runStatus: unknown = RunSchema.properties.status;

const mt = new Maitento({ baseUrl: 'http://127.0.0.1:8080', apiKey: 'mt_x' });
export async function demo(): Promise<RunView> {
  const connector: Connector | undefined = undefined;
  const diagnostics: Diagnostic[] = [];
  void connector;
  void diagnostics;
  try {
    await mt.deploy.create({ files: [{ path: 'agents/a.mtr', content: '' }] });
  } catch (error) {
    if (error instanceof UnprocessableEntityError) diagnostics.push(...error.diagnostics);
  }
  return mt.interactionRuns.run('support', {
    inputs: { message: 'hi' },
    onWaiting: async (run) => {
      await mt.interactionRuns.approve(run.id, { approvalId: run.pendingApproval?.id });
    },
  });
}
`;

beforeAll(() => {
  if (!existsSync(join(sdkDir, 'dist/index.js'))) {
    throw new Error('packages/sdk/dist is missing: run `npx tsc -b` (or `npm test`, which builds first)');
  }
  dir = mkdtempSync(join(tmpdir(), 'mt-sdk-packed-'));
  const packed = JSON.parse(
    execFileSync('npm', ['pack', '--json', '--pack-destination', dir], { cwd: sdkDir, encoding: 'utf8' }),
  ) as { filename: string; files: { path: string }[] }[];
  tarball = join(dir, packed[0].filename);
  const target = join(dir, 'app/node_modules/@maitento/sdk');
  mkdirSync(target, { recursive: true });
  execFileSync('tar', ['xzf', tarball, '-C', target, '--strip-components=1']);
  // Its one dependency, typebox (itself without dependencies), as npm would install it next to the SDK.
  cpSync(join(root, 'node_modules/typebox'), join(dir, 'app/node_modules/typebox'), { recursive: true });
  writeFileSync(join(dir, 'app/package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the packed @maitento/sdk', () => {
  it('is public, Apache-2.0, has a README, and needs no other @maitento package (only typebox, for its schemas)', () => {
    const manifest = JSON.parse(readFileSync(join(dir, 'app/node_modules/@maitento/sdk/package.json'), 'utf8'));
    expect(manifest.private).toBeUndefined();
    expect(manifest.license).toBe('Apache-2.0');
    expect(Object.keys(manifest.dependencies ?? {})).toEqual(['typebox']);
    expect(manifest.peerDependencies ?? {}).toEqual({});
    expect(existsSync(join(dir, 'app/node_modules/@maitento/sdk/README.md'))).toBe(true);
    const listing = execFileSync('tar', ['tzf', tarball], { encoding: 'utf8' });
    expect(listing).toContain('package/dist/index.d.ts');
    expect(listing).not.toMatch(/\.test\.|\/src\/|\.map\n/);
    expect(listing).not.toMatch(/@maitento\/(errors|lang)/);
  });

  it('imports and works from a folder outside the repository: typed errors with the code, retries with one key', () => {
    const result = spawnSync(process.execPath, ['--input-type=module', '-e', CONSUMER], {
      cwd: join(dir, 'app'),
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '', HOME: dir },
      timeout: 20_000,
    });
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout)).toEqual({
      notFound: { isNotFound: true, isMaitento: true, code: 'api:runs:not-found', status: 404 },
      started: { id: 'r1', attempts: 2, sameKey: true },
    });
  });

  it('type-checks a TypeScript program against its declarations alone (strict, no @types/node)', () => {
    writeFileSync(join(dir, 'app/consumer.ts'), TYPED_CONSUMER);
    // No @types/node: the declarations must stand on the standard library (fetch, Headers, AbortSignal) alone.
    // skipLibCheck: checking typebox's own declarations (a type-level parser) takes 30 s; the SDK's are emitted
    // by tsc, the consumer's errors still show, and the expect-error lines prove the types resolve.
    const declarations = execFileSync('tar', ['xzOf', tarball, '--wildcards', 'package/dist/*.d.ts'], {
      encoding: 'utf8',
    });
    expect(declarations).not.toMatch(/\bNodeJS\.|\bBuffer\b|from 'node:/);
    const compilerOptions = {
      strict: true,
      noEmit: true,
      target: 'es2022',
      module: 'nodenext',
      moduleResolution: 'nodenext',
      lib: ['es2022', 'dom', 'dom.asynciterable'],
      types: [],
      skipLibCheck: true,
    };
    writeFileSync(join(dir, 'app/tsconfig.json'), JSON.stringify({ compilerOptions, files: ['consumer.ts'] }));
    const result = spawnSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', '.'], {
      cwd: join(dir, 'app'),
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(result.stdout + result.stderr).toBe('');
    expect(result.status).toBe(0);
  });
});
