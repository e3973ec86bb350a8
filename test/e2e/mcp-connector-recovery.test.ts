import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApprovalView, expectWholeEvents } from './helpers/api.js';
import { runsRepoFiles } from './helpers/config-repo.js';
import { type LocalMcpServer, type LocalMcpTool, startLocalMcpServer } from './helpers/mcp-upstream.js';
import type { WorkerProcess } from './helpers/processes.js';
import { type RunsStack, startRunsStack } from './helpers/stack.js';

// Calls of a remote MCP server's tools carry no idempotency key, so none may be made twice: not after a model
// reuses a call id (an approval belongs to one call of one turn), not after the worker making it is killed
// (its outcome is unknown, and the model is told so). Real `mt serve` and `mt worker` processes on one database.
const TRACKER_SECRET = 'tr-secret-mcp-recovery-41c9';

let released = false;
let release: () => void = () => {
  released = true;
};
const created: string[] = [];
const createIssue: LocalMcpTool = {
  name: 'create_issue',
  description: 'Opens an issue',
  inputSchema: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] },
  answer: (args) => {
    created.push(String(args.title));
    return `opened #${created.length}: ${String(args.title)}`;
  },
};
// Slow: its answer waits until the test lets it go (after the worker making the call is dead); later calls are answered
// at once.
const closeOrder: LocalMcpTool = {
  name: 'close_order',
  description: 'Closes an order for good',
  inputSchema: { type: 'object', properties: { order: { type: 'string' } }, required: ['order'] },
  answer: async (args) => {
    if (!released) {
      await new Promise<void>((resolve) => {
        release = () => {
          released = true;
          resolve();
        };
      });
    }
    return `closed ${String(args.order)}`;
  },
};

function mcpFiles(url: string) {
  return [
    { path: 'connectors/mcp/issue-create.mtr', content: `url = "${url}"\ntool = "create_issue"\nauth = "Header"\n` },
    {
      path: 'external-operations/open-api/file-issue.mtr',
      content: `connector = @ref("issue-create")
guidance = "Opens an issue."
auth = { header = "Authorization" secret = @ref("tracker-key") }
requiresApproval = true
`,
    },
    { path: 'connectors/mcp/order-close.mtr', content: `url = "${url}"\ntool = "close_order"\nauth = "Header"\n` },
    {
      path: 'external-operations/open-api/close-order.mtr',
      content: `connector = @ref("order-close")
guidance = "Closes an order."
auth = { header = "Authorization" secret = @ref("tracker-key") }
`,
    },
    {
      path: 'agents/clerk-agent.mtr',
      content: `model = "scripted:clerk"
instructions = "Do what the customer asks."
functions = [ { ref = @ref("file-issue") }, { ref = @ref("close-order") } ]
`,
    },
    {
      path: 'interactions/one-shot/clerk.mtr',
      content: `agent = { name = "Clerk" agent = @ref("clerk-agent") }
task = "A customer asks: %%message%%"
inputs.prompts = [ { name = "message" description = "What the customer wrote" required = true } ]
`,
    },
  ];
}

let stack: RunsStack;
let mcp: LocalMcpServer;
let scripts: string;

async function script(turns: unknown[]): Promise<void> {
  await writeFile(join(scripts, 'clerk.json'), JSON.stringify(turns));
}

beforeAll(async () => {
  scripts = await mkdtemp(join(tmpdir(), 'mt-e2e-mcp-recovery-'));
  mcp = await startLocalMcpServer([createIssue, closeOrder]);
  stack = await startRunsStack({
    env: { MT_WORKER_CONCURRENCY: '1', MT_SCRIPTED_MODELS: scripts },
  });
  const secret = await stack.api.request('POST', '/v1/secrets', { name: 'tracker-key', value: TRACKER_SECRET });
  expect(secret.status, JSON.stringify(secret.body)).toBe(201);
  await stack.api.deploy([...runsRepoFiles({ origin: stack.upstream.origin }), ...mcpFiles(mcp.url)]);
}, 90_000);

afterAll(async () => {
  release();
  stack?.openai.open('busy');
  await stack?.close();
  await mcp?.close();
  if (scripts) await rm(scripts, { recursive: true, force: true });
});

describe('MCP-connector calls in runs', { timeout: 90_000 }, () => {
  it('asks again for the same call in the next turn when the model reuses its call id: one approval, one call', async () => {
    const fileIt = { name: 'file-issue', id: 'call_0', arguments: { request: { title: 'Lamp broken' } } };
    await script([{ toolCalls: [fileIt] }, { toolCalls: [fileIt] }, { text: 'Filed once.' }]);
    const started = await stack.api.startRun('clerk', { message: 'File the lamp issue' });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const first = await stack.api.waitForRun(started.body.id, (r) => r.status !== 'Running');
    expect(first.status, JSON.stringify(first)).toBe('PendingApproval');
    const approval = first.pendingApproval as ApprovalView;
    const approved = await stack.api.request('POST', `/v1/approvals/${approval.id}/approve`, {});
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    const second = await stack.api.waitForRun(
      started.body.id,
      (r) => r.status !== 'Running' && (r.pendingApproval as ApprovalView | null)?.id !== approval.id,
    );
    expect(second.status, JSON.stringify(second)).toBe('PendingApproval');
    expect(created).toEqual(['Lamp broken']);
    const next = second.pendingApproval as ApprovalView;
    const rejected = await stack.api.request('POST', `/v1/approvals/${next.id}/reject`, { reason: 'Already filed' });
    expect(rejected.status, JSON.stringify(rejected.body)).toBe(200);
    expect((await stack.api.waitForEnd(started.body.id)).status).toBe('Completed');
    expect(created).toEqual(['Lamp broken']);
  });

  it('does not make a call again whose worker was killed during it: the run says its outcome is unknown', async () => {
    await script([
      { toolCalls: [{ name: 'close-order', arguments: { request: { order: 'A-9' } } }] },
      { text: 'I could not tell whether the order was closed.' },
    ]);
    // The server's worker takes a run held at the model, so the mt worker is the only one executing.
    const busy = await stack.api.startRun('support-desk', { message: 'Order A-1001, where is it? [gate:busy]' });
    expect(busy.status, JSON.stringify(busy.body)).toBe(201);
    await stack.openai.reached('busy');
    const worker: WorkerProcess = await stack.addWorker();
    const started = await stack.api.startRun('clerk', { message: 'Close order A-9' });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const deadline = Date.now() + 20_000;
    while (!mcp.calls.some((c) => c.tool === 'close_order')) {
      expect(Date.now() < deadline, 'the worker made no close_order call in 20 s').toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await worker.kill();
    stack.workers.splice(stack.workers.indexOf(worker), 1);
    release();
    // The server's worker is let go; once the dead worker's job has missed its heartbeat, pg-boss retries it there.
    stack.openai.open('busy');
    const run = await stack.api.waitForEnd(started.body.id, 60_000);
    expect(run.status, JSON.stringify(run)).toBe('Completed');
    expect(mcp.calls.filter((c) => c.tool === 'close_order')).toHaveLength(1);
    const events = await stack.api.events(run.id);
    expectWholeEvents(events);
    const results = events.filter((e) => e.type === 'tool-result');
    expect(results).toHaveLength(1);
    expect(results[0]!.data).toMatchObject({ ok: false, code: 'api:runs:call-outcome-unknown', name: 'close-order' });
    expect(String(results[0]!.data.result)).toContain('NOT made again');
    expect((await stack.api.waitForEnd(busy.body.id)).status).toBe('Completed');
  });
});
