import { Maitento } from '@maitento/sdk';
import { describe, expect, it } from 'vitest';
import type { ApprovalView, RunEvent, RunView } from './helpers/api.js';
import { writeRepo } from './helpers/config-repo.js';
import { ORDERS_SECRET, useRunsStack } from './helpers/stack.js';
import { agent, FIRST, REDRAFT, SHIPPING, startSubAgentsStack } from './helpers/sub-agents-repo.js';
import { defaultUpstreamAnswer } from './helpers/upstream.js';
import { runMt } from './support/harness.js';

// Agents as tools on PostgreSQL with the real `mt serve`, the scripted model (a script per agent: the parent's
// and the child's) and a local upstream: a triage agent hands a refund to a billing agent whose refund tool needs
// a person's approval.
const stack = useRunsStack(() => startSubAgentsStack());

const refunds = () => stack.upstream.requests.filter((r) => r.url.endsWith('/refund'));

async function start(name: string): Promise<RunView> {
  const started = await stack.api.startRun(name, { message: 'My lamp arrived broken' });
  expect(started.status, JSON.stringify(started.body)).toBe(201);
  expect(started.body.parentRunId).toBeNull();
  return started.body;
}

async function pendingOf(id: string, notId?: string): Promise<ApprovalView> {
  const run = await stack.api.waitForRun(
    id,
    (r) => r.status === 'PendingApproval' && r.pendingApproval !== null && r.pendingApproval.id !== notId,
  );
  return run.pendingApproval as ApprovalView;
}

async function childrenOf(id: string): Promise<RunView[]> {
  const listed = await stack.api.request<{ runs: RunView[] }>('GET', '/v1/runs?limit=200');
  expect(listed.status).toBe(200);
  return listed.body.runs.filter((r) => r.parentRunId === id);
}

const started = (events: RunEvent[]) => events.filter((e) => e.type === 'tool-call-started');
const results = (events: RunEvent[]) => events.filter((e) => e.type === 'tool-result');

/** The console's page of a run, signed in with the admin key as a person would (login form, then its cookie). */
async function consoleRunPage(runId: string): Promise<string> {
  const base = stack.api.url;
  const login = await fetch(`${base}/console/login`);
  const csrfCookie = login.headers.getSetCookie().map((c) => c.split(';')[0]!)[0]!;
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await login.text())![1]!;
  const signedIn = await fetch(`${base}/console/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: csrfCookie, origin: base },
    body: new URLSearchParams({ _csrf: csrf, key: stack.adminKey }).toString(),
  });
  expect(signedIn.status).toBe(303);
  const session = signedIn.headers
    .getSetCookie()
    .map((c) => c.split(';')[0]!)
    .find((c) => c.startsWith('mt_console_session='))!;
  const page = await fetch(`${base}/console/runs/${runId}`, { headers: { cookie: session } });
  expect(page.status).toBe(200);
  return page.text();
}

describe('agents as tools', { timeout: 60_000 }, () => {
  it("waits on the child's approval, takes the person's answer of the child's exact call, and completes with the child's answer", async () => {
    const before = refunds().length;
    const run = await start('triage');
    const approval = await pendingOf(run.id);
    // The parent shows the child's call, and which agent asks.
    const [child] = await childrenOf(run.id);
    expect(child).toMatchObject({ parentRunId: run.id, agent: 'billing-agent', status: 'PendingApproval' });
    expect(approval).toMatchObject({ runId: child!.id, agentName: 'billing-agent', functionName: 'refund-order' });
    expect(JSON.parse(approval.argumentsJson).request).toEqual(FIRST);
    const listed = await stack.api.request<{ runs: RunView[] }>('GET', '/v1/runs?status=PendingApproval&limit=200');
    const parentSummary = listed.body.runs.find((r) => r.id === run.id) as unknown as { pendingApprovalId: string };
    expect(parentSummary.pendingApprovalId).toBe(approval.id);
    expect(refunds().length).toBe(before);

    // Approved through the parent: the child's call is made once, exactly as approved.
    const approved = await stack.api.request('POST', `/v1/runs/${run.id}/approve`, {});
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    const done = await stack.api.waitForEnd(run.id);
    expect(done.status, JSON.stringify(done)).toBe('Completed');
    expect(done.result).toBe('Billing handled it.');
    expect(refunds().length).toBe(before + 1);
    expect(JSON.parse(refunds().at(-1)!.body)).toEqual(FIRST);
    expect(refunds().at(-1)!.headers['x-api-key']).toBe(ORDERS_SECRET);

    const childDone = await stack.api.getRun(child!.id);
    expect(childDone).toMatchObject({ status: 'Completed', result: 'Refunded 40 for A-1001 (refund R-77).' });
    // The events are linked both ways: the parent's call names its child, the child's start names the call.
    const events = await stack.api.events(run.id);
    expect(started(events).map((e) => e.data)).toEqual([
      expect.objectContaining({ name: 'billing-agent', index: 0, childRunId: child!.id }),
    ]);
    expect(results(events).map((e) => [e.data.ok, e.data.result])).toEqual([
      [true, 'Refunded 40 for A-1001 (refund R-77).'],
    ]);
    const childEvents = await stack.api.events(child!.id);
    expect(childEvents[0]!.data.parent).toEqual({
      runId: run.id,
      step: 1,
      index: 0,
      agent: 'billing-agent',
      task: 'Refund order A-1001: the lamp arrived broken',
    });
    expect(childEvents.filter((e) => e.type === 'approval-answered')).toHaveLength(1);
    expect(JSON.stringify([...events, ...childEvents])).not.toContain(ORDERS_SECRET);
    expect(await childrenOf(run.id)).toHaveLength(1);
  });

  it('tells the child of a rejection: it redrafts, the person approves the redraft, and only that call is made', async () => {
    const before = refunds().length;
    const run = await start('triage-redraft');
    const first = await pendingOf(run.id);
    expect(JSON.parse(first.argumentsJson).request).toEqual(FIRST);
    const reason = 'Refund at most 25: the lamp still works';
    const rejected = await stack.api.request('POST', `/v1/runs/${run.id}/reject`, { reason });
    expect(rejected.status, JSON.stringify(rejected.body)).toBe(200);
    const second = await pendingOf(run.id, first.id);
    expect(second.runId).toBe(first.runId);
    expect(JSON.parse(second.argumentsJson).request).toEqual(REDRAFT);
    // Answered by the approval's own id (GET /v1/approvals lists the child's approval like any other).
    const pending = await stack.api.request<ApprovalView[]>('GET', '/v1/approvals');
    expect(pending.body.map((a) => a.id)).toContain(second.id);
    const approved = await stack.api.request('POST', `/v1/approvals/${second.id}/approve`, {});
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    const done = await stack.api.waitForEnd(run.id);
    expect(done.status, JSON.stringify(done)).toBe('Completed');
    expect(refunds().length).toBe(before + 1);
    expect(JSON.parse(refunds().at(-1)!.body)).toEqual(REDRAFT);
    const childEvents = await stack.api.events(first.runId!);
    const told = results(childEvents)[0]!;
    expect(told.data).toMatchObject({ ok: false, code: 'api:approvals:rejected' });
    expect(String(told.data.result)).toContain(reason);
    expect(results(await stack.api.events(run.id)).map((e) => e.data.result)).toEqual(['Refunded 25 for A-1001.']);
  });

  it("follows the child through two approvals in a row with mt interaction-run/-approve --wait, to the top run's end (#22)", async () => {
    const env = { MT_API_URL: stack.api.url, MT_API_KEY: stack.adminKey };
    const mt = (args: string[]) => runMt(args, { home: stack.home, env });
    const before = refunds().length;
    const started = await mt([
      'interaction-run',
      'triage-twice',
      '--input',
      'message=My lamp arrived broken',
      '--wait',
    ]);
    expect(started.code, started.stderr).toBe(0);
    const runId = /^started run (\S+)/m.exec(started.stderr)?.[1] as string;
    const [child] = await childrenOf(runId);
    // The first approval, shown with the run that asks (the child) and the commands that answer it through the top run.
    expect(started.stdout).toContain(`Run ${runId} waits for a person to approve this call:`);
    expect(started.stdout).toContain(`asked by:  run ${child!.id}, below this one`);
    expect(started.stdout).toContain('"amount": 40');
    expect(started.stdout).toContain(`mt interaction-approve ${runId}`);
    expect(refunds().length).toBe(before);

    // Approved through the top run: the child goes on and asks again; --wait shows the second approval and stops.
    const first = await mt(['interaction-approve', runId, '--wait']);
    expect(first.code, first.stderr).toBe(0);
    expect(refunds().length).toBe(before + 1);
    expect(first.stderr).toMatch(/^ {4}\s*\d+ \S+ refund-order returned \(HTTP 200\)/m);
    expect(first.stderr).toContain(`    (run ${child!.id}, started by a call above, goes on)`);
    expect(first.stdout).toContain(`Run ${runId} waits for a person to approve this call:`);
    expect(first.stdout).toContain(`asked by:  run ${child!.id}, below this one`);
    expect(first.stdout).toContain('"amount": 7');
    const second = (await stack.api.getRun(runId)).pendingApproval as ApprovalView;
    expect(second).toMatchObject({ runId: child!.id, functionName: 'refund-order' });
    expect(first.stdout).toContain(`approval:  ${second.id}`);

    // Approved by the child's own id: --wait follows the top run to its end and prints its answer.
    const last = await mt(['interaction-approve', child!.id, '--wait']);
    expect(last.code, last.stderr).toBe(0);
    expect(last.stderr).toContain(`approved; following run ${runId} (the run at the top of ${child!.id})`);
    expect(last.stderr).toContain('completed: Billing did both.');
    expect(last.stdout.trim()).toBe('Billing did both.');
    expect((await stack.api.getRun(runId)).status).toBe('Completed');
    expect(refunds().length).toBe(before + 2);
    expect(JSON.parse(refunds().at(-1)!.body)).toEqual(SHIPPING);
  });

  it("the TS SDK's run() calls onWaiting for each of the child's two approvals, which answer it, and resolves at the top run's end (#22)", async () => {
    const mt = new Maitento({ baseUrl: stack.api.url, apiKey: stack.adminKey });
    const before = refunds().length;
    const seen: { runId: string; asker: string | null; agent: string | null; request: unknown; made: number }[] = [];
    const done = await mt.interactionRuns.run('triage-twice', {
      inputs: { message: 'My lamp arrived broken' },
      // Without following the child, run() would wait forever: the parent's stream has no event while it waits.
      signal: AbortSignal.timeout(40_000),
      onWaiting: async (waiting) => {
        const approval = waiting.pendingApproval!;
        seen.push({
          runId: waiting.id,
          asker: approval.runId,
          agent: approval.agentName,
          request: JSON.parse(approval.argumentsJson).request,
          made: refunds().length - before,
        });
        await mt.interactionRuns.approve(waiting.id, { approvalId: approval.id });
      },
    });
    expect(done).toMatchObject({ status: 'Completed', result: 'Billing did both.', parentRunId: null });
    const [child] = await childrenOf(done.id);
    expect(child).toMatchObject({ status: 'Completed', agent: 'billing-twice-agent' });
    // Asked once per approval, in order, each naming the child that asks; the first call made only once approved.
    expect(seen).toEqual([
      { runId: done.id, asker: child!.id, agent: 'billing-twice-agent', request: FIRST, made: 0 },
      { runId: done.id, asker: child!.id, agent: 'billing-twice-agent', request: SHIPPING, made: 1 },
    ]);
    expect(
      refunds()
        .slice(before)
        .map((r) => JSON.parse(r.body)),
    ).toEqual([FIRST, SHIPPING]);
  });

  it("mt interaction-logs --follow prints the child's events indented under a line naming it, to the top run's end (#22)", async () => {
    const env = { MT_API_URL: stack.api.url, MT_API_KEY: stack.adminKey };
    const run = await start('triage-twice');
    const logs = runMt(['interaction-logs', run.id, '--follow'], { home: stack.home, env });
    const first = await pendingOf(run.id);
    expect((await stack.api.request('POST', `/v1/runs/${run.id}/approve`, {})).status).toBe(200);
    await pendingOf(run.id, first.id);
    expect((await stack.api.request('POST', `/v1/runs/${run.id}/approve`, {})).status).toBe(200);
    const printed = await logs;
    expect(printed.code, printed.stderr).toBe(0);
    const lines = printed.stdout.trimEnd().split('\n');
    const header = lines.indexOf(`    run ${first.runId}, agent billing-twice-agent:`);
    expect(header, printed.stdout).toBeGreaterThan(0);
    expect(lines[header - 1]).toMatch(/^ *\d+ \S+ calling billing-twice-agent with /);
    // The child's steps, indented: both approvals asked and answered, both calls made.
    const child = lines.slice(header + 1).filter((l) => l.startsWith('    '));
    expect(child.filter((l) => / approval requested for refund-order /.test(l))).toHaveLength(2);
    expect(child.filter((l) => / approval \S+ approved by /.test(l))).toHaveLength(2);
    expect(child.filter((l) => /^ {4}\s*\d+ \S+ refund-order returned \(HTTP 200\)/.test(l))).toHaveLength(2);
    expect(child.at(-1)).toMatch(/^ {4}\s*\d+ \S+ completed: Refunded 40 and the shipping \(7\)\.$/);
    // Then the parent's own again, not indented, to its end.
    expect(lines.at(-1)).toMatch(/^ *\d+ \S+ completed: Billing did both\.$/);
    expect(lines.at(-1)).not.toMatch(/^ {4}/);
  });

  it("follows the child's redraft with mt interaction-reject --wait, to its approval (#22)", async () => {
    const env = { MT_API_URL: stack.api.url, MT_API_KEY: stack.adminKey };
    const mt = (args: string[]) => runMt(args, { home: stack.home, env });
    const run = await start('triage-redraft');
    const first = await pendingOf(run.id);
    const rejected = await mt(['interaction-reject', run.id, '-r', 'At most 25', '--wait']);
    expect(rejected.code, rejected.stderr).toBe(0);
    expect(rejected.stderr).toContain(`    (run ${first.runId}, started by a call above, goes on)`);
    expect(rejected.stderr).toMatch(/^ {4}\s*\d+ \S+ refund-order failed: .*At most 25/m);
    expect(rejected.stdout).toContain(`asked by:  run ${first.runId}, below this one`);
    expect(rejected.stdout).toContain('"amount": 25');
    const second = await pendingOf(run.id, first.id);
    expect(rejected.stdout).toContain(`approval:  ${second.id}`);
    const cancelled = await stack.api.request('POST', `/v1/runs/${run.id}/cancel`, {});
    expect(cancelled.status).toBe(200);
  });

  it('cancels the child with the parent, and its pending approval expires', async () => {
    const before = refunds().length;
    const run = await start('triage');
    const approval = await pendingOf(run.id);
    const cancelled = await stack.api.request<RunView>('POST', `/v1/runs/${run.id}/cancel`, {});
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    expect((await stack.api.waitForEnd(run.id)).status).toBe('Cancelled');
    const child = await stack.api.waitForEnd(approval.runId!);
    expect(child.status).toBe('Cancelled');
    const after = await stack.api.request<ApprovalView>('GET', `/v1/approvals/${approval.id}`);
    expect(after.body.status).toBe('Expired');
    const late = await stack.api.request('POST', `/v1/approvals/${approval.id}/approve`, {});
    expect(late.status).toBe(409);
    expect(refunds().length).toBe(before);
  });

  it('cancels a parent while its child is running a tool call: both end Cancelled, the parent holding no worker', async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    stack.upstream.setHandler(async (request, res) => {
      if (request.url.startsWith('/orders/SLOW-1')) await held;
      defaultUpstreamAnswer(request, res);
    });
    try {
      const run = await start('triage-slow');
      await stack.upstream.waitFor((r) => r.url.startsWith('/orders/SLOW-1'), 20_000);
      // The parent waits on its child without a status of its own: Running, its call to the agent started.
      expect((await stack.api.getRun(run.id)).status).toBe('Running');
      const [child] = await childrenOf(run.id);
      expect(child).toMatchObject({ status: 'Running', agent: 'billing-slow-agent' });
      const cancelled = await stack.api.request('POST', `/v1/runs/${run.id}/cancel`, {});
      expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
      expect((await stack.api.waitForEnd(run.id)).status).toBe('Cancelled');
      expect((await stack.api.waitForEnd(child!.id)).status).toBe('Cancelled');
      const events = await stack.api.events(run.id);
      expect(events.at(-1)!.type).toBe('run-cancelled');
      expect(results(events)).toEqual([]);
    } finally {
      release();
      stack.upstream.setHandler(defaultUpstreamAnswer);
    }
  });

  it("shows a child whose own call failed as a failed call, and the scripted stand-ins' answers say so (#45)", async () => {
    stack.upstream.setHandler((request, res) => {
      if (!request.url.startsWith('/orders/GONE-1')) return defaultUpstreamAnswer(request, res);
      res.statusCode = 422;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ error: 'order GONE-1 cannot be looked up' }));
    });
    try {
      const run = await start('triage-failing');
      const done = await stack.api.waitForEnd(run.id);
      const [child] = await childrenOf(run.id);
      // The child's script would have said "Order GONE-1 was delivered.": its stand-in reports the failure instead.
      expect(child).toMatchObject({ status: 'Completed', agent: 'billing-failing-agent' });
      expect(child!.result).toMatch(/^\[scripted stand-in billing-failing: the call of get-order failed: /);
      expect(child!.result).not.toContain('was delivered');
      // The parent's call of the child is a failed call (the run view's events, which the console and the CLI show),
      // its result the child's words with the failure named, its duration the child's.
      const call = results(await stack.api.events(run.id))[0]!;
      expect(call.data).toMatchObject({ ok: false, name: 'billing-failing-agent' });
      expect(String(call.data.code)).toMatch(/^api:/);
      expect(String(call.data.result)).toMatch(
        /^\[billing-failing-agent answered after its call of get-order failed: api:\S+\] \[scripted stand-in /,
      );
      expect(call.data.durationMs).toBeGreaterThan(0);
      // The parent's stand-in would have said "Billing handled it.": it ends with words that say what failed.
      expect(done.status).toBe('Completed');
      expect(done.result).toMatch(/^\[scripted stand-in triage-failing: the call of billing-failing-agent failed: /);
      expect(done.result).not.toContain('Billing handled it.');
      // The console's run page says so too.
      const html = await consoleRunPage(run.id);
      expect(html).toContain('Tool call billing-failing-agent: failed');
      expect(html).not.toContain('Tool call billing-failing-agent: succeeded');
      // `mt run-list` names each run's parent (tutorial 6 says it does).
      const env = { MT_API_URL: stack.api.url, MT_API_KEY: stack.adminKey };
      const listed = await runMt(['run-list', '--interaction', 'triage-failing'], { home: stack.home, env });
      expect(listed.code, listed.stderr).toBe(0);
      expect(listed.stdout.split('\n')[0]).toMatch(/^ID +INTERACTION +STATUS +PARENT +TOKENS +COST +CREATED +UPDATED$/);
      const rows = listed.stdout.split('\n').slice(1).filter(Boolean);
      expect(rows.find((l) => l.startsWith(child!.id))).toMatch(new RegExp(`Completed +${run.id} `));
      expect(rows.find((l) => l.startsWith(run.id))).toMatch(/Completed +- /);
    } finally {
      stack.upstream.setHandler(defaultUpstreamAnswer);
    }
  });

  it('runs two children the model asked for in one turn one after the other (docs/runs.md, docs/decisions/0029-two-sub-agents-in-one-turn-one-after-the-other.md)', async () => {
    const run = await start('triage-two');
    const done = await stack.api.waitForEnd(run.id);
    expect(done).toMatchObject({ status: 'Completed', result: 'Both looked up.' });
    const children = await childrenOf(run.id);
    const a = children.find((c) => c.agent === 'lookup-a-agent')!;
    const b = children.find((c) => c.agent === 'lookup-b-agent')!;
    expect(a).toMatchObject({ status: 'Completed', result: 'A is fine.' });
    expect(b).toMatchObject({ status: 'Completed', result: 'B is fine.' });
    // The second child is started only once the first has ended and its answer is stored in the parent.
    expect(Date.parse(b.createdAt)).toBeGreaterThanOrEqual(Date.parse(a.updatedAt));
    const events = await stack.api.events(run.id);
    const order = events
      .filter((e) => e.type === 'tool-call-started' || e.type === 'tool-result')
      .map((e) => `${e.type}:${(e.data as { name?: string }).name ?? ''}`);
    expect(order).toEqual([
      'tool-call-started:lookup-a-agent',
      'tool-result:lookup-a-agent',
      'tool-call-started:lookup-b-agent',
      'tool-result:lookup-b-agent',
    ]);
  });

  it('limits the depth: the fourth agent down is not handed a task, and the one above is told why', async () => {
    const run = await start('deep');
    const done = await stack.api.waitForEnd(run.id);
    expect(done).toMatchObject({ status: 'Completed', result: 'level 0 done' });
    const chain: RunView[] = [done];
    for (let level = 1; level <= 3; level++) {
      const children = await childrenOf(chain.at(-1)!.id);
      expect(children.map((c) => c.agent)).toEqual([`level-${level}`]);
      chain.push(await stack.api.getRun(children[0]!.id));
    }
    expect(await childrenOf(chain[3]!.id)).toEqual([]);
    const deepest = results(await stack.api.events(chain[3]!.id));
    expect(deepest.map((e) => e.data.code)).toEqual(['api:runs:too-deep']);
    expect(chain[3]!.result).toBe('level 3 done without level 4');
    expect(chain[1]!.result).toBe('level 1 done');
    // Level 3 answered right after its call failed: the call of level 3 above it is a failed call, naming why (#45).
    const above = results(await stack.api.events(chain[2]!.id));
    expect(above.map((e) => [e.data.ok, e.data.code])).toEqual([[false, 'api:runs:too-deep']]);
    expect(String(above[0]!.data.result)).toBe(
      '[level-3 answered after its call of level-4 failed: api:runs:too-deep] level 3 done without level 4',
    );
  });

  it('refuses a cycle of agents at mt check and at deploy, naming the cycle', async () => {
    const files = [
      { path: 'agents/a-agent.mtr', content: agent('x', 'A', '{ agent = @ref("b-agent") }') },
      { path: 'agents/b-agent.mtr', content: agent('x', 'B', '{ agent = @ref("a-agent") }') },
    ];
    const dir = await writeRepo(files);
    const checked = await runMt(['check', dir], { home: stack.home });
    expect(checked.code).not.toBe(0);
    expect(checked.stdout + checked.stderr).toContain('mtr:agent:cycle');
    expect(checked.stdout + checked.stderr).toContain('a-agent -> b-agent -> a-agent');
    const deployed = await stack.api.request('POST', '/v1/deploy', { files });
    expect(deployed.status).toBe(422);
    expect(JSON.stringify(deployed.body)).toContain('a-agent -> b-agent -> a-agent');
  });
});
