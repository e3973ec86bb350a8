import { fileURLToPath } from 'node:url';
import { compileRepo, readConfigRepo } from '@maitento/lang';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auth, startTestServer, type TestServer } from './helpers.js';

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
let server: TestServer;

// The platform tools (auth = "Maitento") name paths on the platform: the repo deploys to a server that knows no
// platform URL, as to any other.
beforeAll(async () => {
  server = await startTestServer();
});

afterAll(async () => {
  await server?.close();
});

async function deploy(files: { path: string; content: string }[], dryRun = false) {
  return server.app.inject({
    method: 'POST',
    url: '/v1/deploy',
    headers: auth(server.adminKey),
    payload: { files, dryRun },
  });
}

describe('the example repo at the top of this repository', () => {
  it('is refused until its secrets exist, then deploys, and a second deploy changes nothing', async () => {
    const files = await readConfigRepo(REPO_ROOT);
    expect(files.length).toBeGreaterThan(5);
    const refused = await deploy(files);
    expect(refused.statusCode).toBe(422);
    const diagnostics: { code: string }[] = refused.json().diagnostics;
    expect(diagnostics.length).toBeGreaterThan(0);
    expect(diagnostics.every((d) => d.code === 'api:secrets:not-found')).toBe(true);
    // The secrets the repo names, from the compiled resources (not from message text).
    const compiled = compileRepo(files);
    const missing = new Set<string>([
      ...compiled.tools.flatMap((t) => (t.auth ? [t.auth.secret] : [])),
      ...compiled.interactions.flatMap((i) => i.inputs.functions.auth.flatMap((a) => (a.secret ? [a.secret] : []))),
    ]);
    expect(missing.size).toBeGreaterThan(0);
    for (const name of missing) {
      const created = await server.app.inject({
        method: 'POST',
        url: '/v1/secrets',
        headers: auth(server.adminKey),
        payload: { name, value: `value-of-${name}` },
      });
      expect(created.statusCode).toBe(201);
    }
    const first = await deploy(files);
    expect(first.statusCode, first.body).toBe(200);
    const created = first.json().changes;
    expect(created.length).toBe(files.filter((f) => f.path.endsWith('.mtr')).length);
    expect(created.every((c: { action: string; version: number }) => c.action === 'create' && c.version === 1)).toBe(
      true,
    );
    const second = await deploy(files);
    expect(second.statusCode, second.body).toBe(200);
    expect(second.json().changes.map((c: { action: string }) => c.action)).toEqual(
      Array(created.length).fill('unchanged'),
    );
    const versions = await server.db.query<{ n: number }>('SELECT count(*)::int AS n FROM mt_resource_versions');
    expect(versions.rows[0].n).toBe(created.length);
  });
});
