import { rm, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunView } from './helpers/api.js';
import { runsRepoFiles, writeRepo } from './helpers/config-repo.js';
import { useRunsStack } from './helpers/stack.js';
import { requireBuiltCli, runMt } from './support/harness.js';

// Issue #46, "Deleting what is no longer wanted" (test 5, decision 0295), with the real `mt` CLI against a real
// `mt serve` and `mt worker`: a tool file removed from the repo is named by `mt deploy` (kept), planned and deleted
// by `mt deploy --prune`; an interaction a run waiting for approval pins cannot be deleted (the code names the run)
// until the run ends; a deleted resource is gone from the lists, and a @ref to it fails at the next deploy.
const stack = useRunsStack({ servers: 1, workers: 1 });
let repo: string;

const SPARE_TOOL = 'external-operations/open-api/spare-order.mtr';

function mt(args: string[]) {
  return runMt(args, {
    home: stack.home,
    env: { MT_API_URL: stack.servers[0].url, MT_API_KEY: stack.adminKey, MT_EGRESS_ALLOW: '127.0.0.1' },
  });
}

async function names(command: string): Promise<string[]> {
  const listed = await mt([command, '--json']);
  expect(listed.code, listed.stderr).toBe(0);
  return (JSON.parse(listed.stdout) as { name: string }[]).map((r) => r.name);
}

beforeAll(async () => {
  requireBuiltCli();
  // The runs repo and one tool nothing references.
  repo = await writeRepo([
    ...runsRepoFiles({ origin: stack.upstream.origin }),
    {
      path: SPARE_TOOL,
      content:
        'connector = @ref("orders-get")\nguidance = "Looks up an order, spare."\n' +
        'auth = { header = "X-Api-Key" secret = @ref("orders-api-key") }\n',
    },
  ]);
}, 30_000);

afterAll(async () => {
  if (repo) await rm(repo, { recursive: true, force: true });
});

describe('deleting what is no longer wanted', { timeout: 120_000 }, () => {
  it('names a removed tool file without --prune, plans and deletes it with --prune', async () => {
    const first = await mt(['deploy', repo]);
    expect(first.code, first.stdout + first.stderr).toBe(0);
    expect(first.stdout).toMatch(/tool\s+spare-order\s+create\s+1/);
    expect(await names('extop-list')).toContain('spare-order');

    await unlink(join(repo, SPARE_TOOL));
    const kept = await mt(['deploy', repo]);
    expect(kept.code, kept.stdout + kept.stderr).toBe(0);
    expect(kept.stdout).toMatch(/tool\s+spare-order\s+not in repo\s+1/);
    expect(kept.stderr).toContain('1 not in the repo, kept (mt deploy --prune deletes them)');
    expect(await names('extop-list')).toContain('spare-order');

    const planned = await mt(['deploy', repo, '--prune', '--dry-run']);
    expect(planned.code, planned.stdout + planned.stderr).toBe(0);
    expect(planned.stdout).toMatch(/tool\s+spare-order\s+delete\s+1/);
    expect(planned.stderr).toMatch(/dry run: 0 to create, 0 to update, 1 to delete, \d+ unchanged; nothing was stored/);
    expect(await names('extop-list')).toContain('spare-order');

    const pruned = await mt(['deploy', repo, '--prune', '--json']);
    expect(pruned.code, pruned.stderr).toBe(0);
    const plan = JSON.parse(pruned.stdout);
    expect(plan.applied).toBe(true);
    expect(plan.changes.filter((c: { action: string }) => c.action !== 'unchanged')).toEqual([
      { kind: 'tool', name: 'spare-order', action: 'delete', version: 1, breaking: [] },
    ]);
    expect(await names('extop-list')).not.toContain('spare-order');
    const gone = await mt(['extop-get', 'spare-order']);
    expect(gone.code).not.toBe(0);
    expect(gone.stderr).toContain('api:extops:not-found');
    // Nor is a version of it called by name.
    const call = await stack.api.request<{ code: string }>('POST', '/v1/extops/spare-order/call', {
      arguments: {},
      version: 1,
    });
    expect(call.status).toBe(404);
    expect(call.body.code).toBe('api:extops:not-found');

    // The audit log has the deploy that deleted it.
    const audit = await stack.api.request<{ entries: { after: { versions: { action: string }[] } }[] }>(
      'GET',
      '/v1/audit?action=deploy.applied',
    );
    expect(audit.body.entries[0].after.versions).toEqual([
      { kind: 'tool', name: 'spare-order', version: 1, action: 'delete' },
    ]);

    // A @ref to it fails at the next deploy, which stores nothing.
    await writeFile(
      join(repo, 'agents/spare-agent.mtr'),
      'model = "openai:gpt-4o-mini"\ninstructions = "Spare."\nfunctions = [ { ref = @ref("spare-order") } ]\n',
    );
    const refused = await mt(['deploy', repo]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('mtr:ref:unknown');
    expect(await names('agent-list')).not.toContain('spare-agent');
    await unlink(join(repo, 'agents/spare-agent.mtr'));
  });

  it('refuses to delete an interaction a run waiting for approval pins, naming the run, and deletes it once the run ended', async () => {
    const started = await stack.api.startRun('support-desk', {
      message: 'The lamp of order A-4601 arrived broken, please refund it.',
    });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const run = started.body.id;
    const waiting = await stack.api.waitForRun(run, (r: RunView) => r.status !== 'Running');
    expect(waiting.status, JSON.stringify(waiting)).toBe('PendingApproval');

    const refused = await mt(['interaction-delete', 'support-desk']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('api:resources:pinned');
    expect(refused.stderr).toContain(run);
    const rest = await stack.api.request<{ code: string; error: string }>('DELETE', '/v1/interactions/support-desk');
    expect(rest.status).toBe(409);
    expect(rest.body.code).toBe('api:resources:pinned');
    expect(rest.body.error).toContain(run);
    // The tool the waiting run is about to call: pinned too (and its agent's latest version pins it).
    const tool = await mt(['extop-delete', 'refund-order']);
    expect(tool.code).not.toBe(0);
    expect(tool.stderr).toMatch(/api:resources:(pinned|referenced)/);
    expect(await names('interaction-list')).toContain('support-desk');

    const approved = await stack.api.request('POST', `/v1/runs/${run}/approve`, {});
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    const done = await stack.api.waitForEnd(run);
    expect(done.status, JSON.stringify(done)).toBe('Completed');

    const deleted = await mt(['interaction-delete', 'support-desk']);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.stderr).toContain('deleted interaction support-desk');
    expect(await names('interaction-list')).not.toContain('support-desk');
    const start = await stack.api.startRun('support-desk', { message: 'hello' });
    expect(start.status).toBe(404);
    expect((start.body as unknown as { code: string }).code).toBe('api:interactions:not-found');
    // Nor on a version named.
    const named = await stack.api.startRun('support-desk', { message: 'hello' }, { version: 1 });
    expect(named.status).toBe(404);
    expect((named.body as unknown as { code: string }).code).toBe('api:interactions:not-found');
    // The ended run still reads as it was.
    const read = await stack.api.request<RunView>('GET', `/v1/runs/${run}`);
    expect(read.body.status).toBe('Completed');
    const audit = await stack.api.request<{ entries: { action: string; target: { kind: string; id: string } }[] }>(
      'GET',
      '/v1/audit?action=resource.deleted',
    );
    expect(audit.body.entries[0]).toMatchObject({ target: { kind: 'interaction', id: 'support-desk' } });

    // The repo still holds it: the next deploy creates it anew, numbered after its deletion.
    const again = await mt(['deploy', repo]);
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(again.stdout).toMatch(/interaction\s+support-desk\s+create\s+3/);
    expect(await names('interaction-list')).toContain('support-desk');
  });
});
