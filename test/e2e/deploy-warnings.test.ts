import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createTestDatabase, type TestDatabase } from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServeProcess, startServe } from './helpers/processes.js';
import { requireBuiltCli, runMt, tempHome } from './support/harness.js';

// Issue #45 item 7: `mt deploy` of an agent whose model names a provider the server has no key for succeeds, with a
// warning (api:deploy:model-not-configured) and a hint, printed by the real CLI and returned in the deploy answer's
// warnings, instead of a run failing later with api:models:not-configured. The server runs with no model key at all.
let database: TestDatabase;
let home: string;
let repo: string;
let server: ServeProcess;
const adminKey = `mt_${randomBytes(24).toString('base64url')}`;

const files: Record<string, string> = {
  'agents/helper.mtr': '// A helper on OpenAI.\nmodel = "openai:gpt-4o-mini"\ninstructions = "You help."\n',
  'agents/offline.mtr': 'model = "scripted:offline"\ninstructions = "You help without a key."\n',
  'interactions/one-shot/ask.mtr':
    'agent = {\n  name = "Helper"\n  agent = @ref("helper")\n}\ntask = "%%question%%"\ninputs.prompts = [\n  {\n    name = "question"\n    required = true\n  }\n]\n',
};

function mt(args: string[]) {
  return runMt(args, { home, env: { MT_API_URL: server.url, MT_API_KEY: adminKey } });
}

beforeAll(async () => {
  requireBuiltCli();
  home = await tempHome();
  repo = await mkdtemp(join(tmpdir(), 'mt-e2e-warn-repo-'));
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(repo, path)), { recursive: true });
    await writeFile(join(repo, path), text);
  }
  database = await createTestDatabase('mt_e2e_deploy_warnings', { migrated: true });
  // No OPENAI_API_KEY nor OPENAI_BASE_URL: the clean environment of startServe has no model setting.
  server = await startServe(home, {
    DATABASE_URL: database.url,
    MT_SECRET_KEY: randomBytes(32).toString('hex'),
    MT_BOOTSTRAP_KEY: adminKey,
  });
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await database?.drop();
  for (const dir of [home, repo]) if (dir) await rm(dir, { recursive: true, force: true });
});

describe('mt deploy of a model whose provider has no key on the server', { timeout: 120_000 }, () => {
  it('deploys, and prints a warning with its code, the missing setting and a hint', async () => {
    const result = await mt(['deploy', repo]);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stderr).toContain('api:deploy:model-not-configured');
    expect(result.stderr).toContain('agents/helper.mtr:2');
    expect(result.stderr).toMatch(
      /The agent helper uses the model openai:gpt-4o-mini, but this server has no OPENAI_API_KEY/,
    );
    expect(result.stderr).toMatch(/Set OPENAI_API_KEY where mt serve and every mt worker run/);
    // The scripted stand-in needs no key: no warning for it.
    expect(result.stderr).not.toContain('agent offline');
    expect(result.stderr).not.toMatch(/^error/m);
    const listed = await mt(['agent-list', '--json']);
    expect(
      JSON.parse(listed.stdout)
        .map((a: { name: string }) => a.name)
        .sort(),
    ).toEqual(['helper', 'offline']);
  });

  it('returns the warning in the deploy answer, also when nothing changed', async () => {
    const result = await mt(['deploy', repo, '--json']);
    expect(result.code, result.stderr).toBe(0);
    const plan = JSON.parse(result.stdout);
    expect(plan.applied).toBe(true);
    expect(plan.changes.every((c: { action: string }) => c.action === 'unchanged')).toBe(true);
    expect(plan.warnings).toEqual([
      expect.objectContaining({
        code: 'api:deploy:model-not-configured',
        severity: 'warning',
        file: 'agents/helper.mtr',
        line: 2,
        column: 1,
        hint: expect.stringContaining('OPENAI_API_KEY'),
      }),
    ]);
  });
});
