import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

// Runs the real built `mt` (npm test builds it first), the way a user runs `mt check`.
const root = fileURLToPath(new URL('../../../../', import.meta.url));
const mt = join(root, 'node_modules', '.bin', 'mt');
const dirs: string[] = [];

function run(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(mt, args, { env: { ...process.env, ...env }, timeout: 20_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr });
    });
  });
}

async function repo(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'mt-check-'));
  dirs.push(dir);
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), content);
  }
  return dir;
}

afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

const broken = {
  'connectors/open-api/c.mtr': 'method = "GET"\nurl = "https://api.example.com/x/{id}"\ndescription = "d"\n',
  'external-operations/open-api/t.mtr': 'connector = @ref("cc")\nguidance = "g"\n',
};

describe('mt check', () => {
  it('passes the example repo at the top level with exit code 0 and a summary line', async () => {
    // Its handbook search and file tools (auth = "Maitento") call the server's own URL, mt serve's default address.
    const result = await run(['check', root], { MT_PUBLIC_URL: 'http://127.0.0.1:8080' });
    expect(result.stderr).toMatch(/^ok: \d+ resources checked, 0 errors, 0 warnings\n$/);
    expect(result.code).toBe(0);
  });

  it('prints every error compiler-style with the source line and a hint, and exits 1', async () => {
    const dir = await repo(broken);
    const result = await run(['check', dir]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('connectors/open-api/c.mtr:2:34 error mtr:path:undeclared');
    expect(result.stderr).toContain('external-operations/open-api/t.mtr:1:13 error mtr:ref:unknown');
    expect(result.stderr).toContain('connector = @ref("cc")');
    expect(result.stderr).toContain('did you mean "c"?');
    expect(result.stderr).toMatch(/failed: 2 resources checked, 2 errors, 0 warnings\n$/);
  });

  it('prints resources and diagnostics as JSON with --json, files relative to the repo', async () => {
    const dir = await repo(broken);
    const result = await run(['check', dir, '--json']);
    expect(result.code).toBe(1);
    const out = JSON.parse(result.stdout);
    expect(out.resources).toEqual([
      { kind: 'connector', name: 'c', file: 'connectors/open-api/c.mtr' },
      { kind: 'tool', name: 't', file: 'external-operations/open-api/t.mtr' },
    ]);
    expect(out.diagnostics).toEqual([
      {
        code: 'mtr:path:undeclared',
        severity: 'error',
        message: 'the url has the path parameter {id}, but parameters.path does not declare id',
        file: 'connectors/open-api/c.mtr',
        line: 2,
        column: 34,
      },
      {
        code: 'mtr:ref:unknown',
        severity: 'error',
        message: '@ref("cc") names no connector',
        file: 'external-operations/open-api/t.mtr',
        line: 1,
        column: 13,
      },
    ]);
    expect(out.tools).toBeUndefined();
  });

  it('adds each tool definition with --tools, and judges URLs by MT_EGRESS_ALLOW', async () => {
    const dir = await repo({
      'connectors/open-api/local.mtr': 'method = "GET"\nurl = "http://127.0.0.1:9000/ping"\ndescription = "d"\n',
      'external-operations/open-api/ping.mtr': 'connector = @ref("local")\nguidance = "Pings."\n',
    });
    const refused = await run(['check', dir, '--json']);
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout).diagnostics[0].code).toBe('api:connectors:address-blocked');

    const allowed = await run(['check', dir, '--json', '--tools'], { MT_EGRESS_ALLOW: '127.0.0.1' });
    expect(allowed.code).toBe(0);
    expect(JSON.parse(allowed.stdout).tools).toEqual([
      {
        name: 'ping',
        description: 'Pings.',
        parameters: { type: 'object', properties: {}, required: [], additionalProperties: false },
      },
    ]);
  });
});
