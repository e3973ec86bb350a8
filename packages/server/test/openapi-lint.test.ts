import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers.js';

// The document the server serves passes Redocly's `recommended` ruleset (@redocly/cli lint), as client
// generators and API portals expect; rules turned off are in redocly.yaml, with the why in docs/decisions.md.
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
    const lint = spawnSync(
      process.execPath,
      [
        join(root, 'node_modules/@redocly/cli/bin/cli.js'),
        'lint',
        file,
        '--config',
        join(root, 'redocly.yaml'),
        '--format',
        'json',
      ],
      {
        cwd: dir,
        encoding: 'utf8',
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
        timeout: 60_000,
      },
    );
    const report = JSON.parse(lint.stdout) as {
      problems: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[];
    };
    const problems = report.problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} (${p.location[0]?.pointer})`);
    expect(problems).toEqual([]);
    expect(lint.status).toBe(0);
  });

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
