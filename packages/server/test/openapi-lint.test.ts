import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers.js';

// The document the server serves passes Redocly's `recommended` ruleset (@redocly/cli lint) and Spectral's
// `spectral:oas` (@stoplight/spectral-cli lint), as client generators and API portals expect. Redocly's one
// ignored problem is in .redocly.lint-ignore.yaml, with its reason; Spectral's ruleset is .spectral.yaml.
const root = fileURLToPath(new URL('../../../', import.meta.url));
let server: TestServer;
let dir: string;

beforeAll(async () => {
  server = await startTestServer();
  dir = mkdtempSync(join(tmpdir(), 'mt-openapi-'));
});

afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the served OpenAPI document', () => {
  it('passes `redocly lint` with the recommended ruleset: no errors, no warnings', async () => {
    const res = await server.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    const file = join(dir, 'openapi.json');
    writeFileSync(file, res.body);
    // Redocly reads the ignore file next to its config, naming the document by its path from there.
    copyFileSync(join(root, 'redocly.yaml'), join(dir, 'redocly.yaml'));
    copyFileSync(join(root, '.redocly.lint-ignore.yaml'), join(dir, '.redocly.lint-ignore.yaml'));
    const lint = spawnSync(
      process.execPath,
      [
        join(root, 'node_modules/@redocly/cli/bin/cli.js'),
        'lint',
        file,
        '--config',
        join(dir, 'redocly.yaml'),
        '--format',
        'json',
      ],
      {
        cwd: dir,
        encoding: 'utf8',
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
        timeout: 110_000,
      },
    );
    const report = JSON.parse(lint.stdout) as {
      totals: { ignored: number };
      problems: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[];
    };
    const problems = report.problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} (${p.location[0]?.pointer})`);
    expect(problems).toEqual([]);
    expect(report.totals.ignored).toBe(1);
    expect(lint.status).toBe(0);
    // The linters are CLIs started from scratch: ~6 s each on an idle machine, several times that on a loaded one.
  }, 120_000);

  it('passes `spectral lint` with spectral:oas: no errors, no warnings, no hints', async () => {
    const res = await server.app.inject({ method: 'GET', url: '/openapi.json' });
    const file = join(dir, 'spectral-openapi.json');
    writeFileSync(file, res.body);
    const lint = spawnSync(
      process.execPath,
      [
        join(root, 'node_modules/@stoplight/spectral-cli/dist/index.js'),
        'lint',
        file,
        '--ruleset',
        join(root, '.spectral.yaml'),
        '--format',
        'json',
        '--fail-severity',
        'hint',
        '--quiet',
      ],
      { cwd: dir, encoding: 'utf8', timeout: 110_000 },
    );
    const report = JSON.parse(lint.stdout || '[]') as { code: string; message: string; path: string[] }[];
    expect(report.map((p) => `${p.code}: ${p.message} (${p.path.join('.')})`)).toEqual([]);
    expect(lint.status, lint.stderr).toBe(0);
  }, 120_000);

  it('names every operation with a unique operationId', async () => {
    const doc = (await server.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const ids: string[] = [];
    for (const methods of Object.values(doc.paths as Record<string, Record<string, { operationId?: string }>>)) {
      for (const operation of Object.values(methods)) ids.push(operation.operationId ?? '(none)');
    }
    expect(ids.length).toBeGreaterThan(40);
    expect(ids.filter((id) => !/^[a-z][A-Za-z]+$/.test(id))).toEqual([]);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
