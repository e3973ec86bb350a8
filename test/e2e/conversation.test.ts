import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Maitento } from '@maitento/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Api, api, expectWholeEvents, type RunView } from './helpers/api.js';
import { runsRepoFiles } from './helpers/config-repo.js';
import { startServe } from './helpers/processes.js';
import { type RunsStack, startRunsStack } from './helpers/stack.js';
import { cleanEnv, ROOT } from './support/harness.js';

// Conversation interactions (issue #21, tests 1 and 4) on the real `mt serve` on PostgreSQL: a scripted support desk
// that looks an order up on a local upstream, talked to over four turns through REST; the process that executed it
// SIGKILLed between turns; a deploy in the middle; the idle limit; and the fake OpenAI server, which shows the whole
// history is sent at each turn.
const REPLIES = [
  'Order A-1001 is a glass kettle. How can I help?',
  'Sorry it arrived broken. Shall I refund it?',
  'Done: a refund of 49.90 is on its way.',
  'Goodbye!',
];

const desk = (model: string, instructions = 'Help the customer.') => ({
  path: 'agents/desk-agent.mtr',
  content: `model = "${model}"
instructions = "${instructions}"
functions = [
  { ref = @ref("get-order") }
]
`,
});
const conversation = (name: string, agent: string, extra = '') => ({
  path: `interactions/conversation/${name}.mtr`,
  content: `agent = {
  name = "Desk"
  agent = @ref("${agent}")
}
task = "A customer writes: %%message%%"
inputs.prompts = [
  { name = "message" required = true }
]
${extra}`,
});
const plainAgent = (name: string, model: string) => ({
  path: `agents/${name}.mtr`,
  content: `model = "${model}"\ninstructions = "Chat."\n`,
});

const PTY = [
  'PTY-1 Order A-1001 found. What went wrong?',
  'PTY-2 Refunded 49.90.',
  'PTY-3 Anything else?',
  'PTY-4 Goodbye.',
];

/**
 * Runs `mt` on a pseudo-terminal (through `script`), as a person at a terminal: each time the screen shows a step's
 * `after` text (past what earlier steps waited for), it types the step's line and Enter. Resolves with the exit code
 * and everything the terminal showed.
 */
function chatInTerminal(
  args: string[],
  env: Record<string, string>,
  steps: { after: string; type: string }[],
): Promise<{ code: number | null; shown: string }> {
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const command = [process.execPath, join(ROOT, 'packages/cli/bin/mt.js'), ...args].map(quote).join(' ');
  const child = spawn('script', ['-qec', command, '/dev/null'], {
    cwd: stack.home,
    env: { ...cleanEnv(stack.home), SHELL: '/bin/sh', ...env },
  });
  let shown = '';
  let from = 0;
  let next = 0;
  child.stdout.on('data', (chunk: Buffer) => {
    shown += chunk.toString();
    const step = steps[next];
    if (step === undefined) return;
    const at = shown.indexOf(step.after, from);
    if (at < 0) return;
    from = at + step.after.length;
    next++;
    child.stdin.write(`${step.type}\r`);
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`mt interaction-chat did not finish in 60 s:\n${shown}`));
    }, 60_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, shown });
    });
  });
}

let stack: RunsStack;
let client: Api;
let scripts: string;

function baseFiles() {
  return [
    ...runsRepoFiles({ origin: stack.upstream.origin }),
    plainAgent('idle-agent', 'scripted:idle'),
    plainAgent('chat-agent', 'openai:gpt-4o-mini'),
    conversation('idle-desk', 'idle-agent', 'maxIdle = "2s"\n'),
    conversation('chat', 'chat-agent'),
    {
      path: 'agents/pty-agent.mtr',
      content: `model = "scripted:pty"
instructions = "Help the customer."
functions = [
  { ref = @ref("get-order") },
  { ref = @ref("refund-order") }
]
`,
    },
    conversation('pty-desk', 'pty-agent'),
    // A conversation whose agent hands a refund to a billing agent that asks for two approvals in a row.
    {
      path: 'agents/sub-desk-agent.mtr',
      content: `model = "scripted:sub-desk"\ninstructions = "Route."\nfunctions = [ { agent = @ref("sub-billing-agent") } ]\n`,
    },
    {
      path: 'agents/sub-billing-agent.mtr',
      content: `model = "scripted:sub-billing"\ninstructions = "Refund."\nsummary = "Refunds orders"\nfunctions = [ { ref = @ref("refund-order") } ]\n`,
    },
    conversation('sub-desk', 'sub-desk-agent'),
  ];
}

beforeAll(async () => {
  scripts = await mkdtemp(join(tmpdir(), 'mt-e2e-conv-'));
  await writeFile(
    join(scripts, 'desk.json'),
    JSON.stringify([
      { toolCalls: [{ name: 'get-order', arguments: { additionalInputs: { 'path.orderId': 'A-1001' } } }] },
      ...REPLIES.map((text) => ({ text })),
    ]),
  );
  await writeFile(join(scripts, 'desk-v2.json'), JSON.stringify([{ text: 'the new version answers' }]));
  await writeFile(join(scripts, 'idle.json'), JSON.stringify([{ text: 'Anything else?' }]));
  const orderCall = { additionalInputs: { 'path.orderId': 'A-1001' } };
  await writeFile(
    join(scripts, 'pty.json'),
    JSON.stringify([
      { toolCalls: [{ name: 'get-order', arguments: orderCall }] },
      { text: PTY[0] },
      {
        toolCalls: [{ name: 'refund-order', arguments: { request: { amount: 49.9, reason: 'Broken' }, ...orderCall } }],
      },
      { text: PTY[1] },
      { text: PTY[2] },
      { text: PTY[3] },
    ]),
  );
  const refundCall = (amount: number) => ({
    toolCalls: [{ name: 'refund-order', arguments: { request: { amount, reason: 'Broken' }, ...orderCall } }],
  });
  await writeFile(
    join(scripts, 'sub-desk.json'),
    JSON.stringify([
      { toolCalls: [{ name: 'sub-billing-agent', arguments: { task: 'Refund A-1001 and its shipping' } }] },
      { text: 'SUB-1 Billing refunded both.' },
    ]),
  );
  await writeFile(
    join(scripts, 'sub-billing.json'),
    JSON.stringify([refundCall(40), refundCall(7), { text: 'Refunded 40 and 7.' }]),
  );
  stack = await startRunsStack({ deploy: false, env: { MT_SCRIPTED_MODELS: scripts } });
  client = stack.api;
  expect((await client.request('POST', '/v1/secrets', { name: 'orders-api-key', value: 'sk-conv-e2e' })).status).toBe(
    201,
  );
  await client.deploy([...baseFiles(), desk('scripted:desk'), conversation('support-desk-chat', 'desk-agent')]);
}, 90_000);

afterAll(async () => {
  await stack?.close();
  if (scripts) await rm(scripts, { recursive: true, force: true });
});

const waiting = (id: string) => client.waitForRun(id, (r) => r.status === 'WaitingForInput' || r.status === 'Failed');

async function send(id: string, text: string): Promise<RunView> {
  const sent = await client.request<RunView>('POST', `/v1/runs/${id}/messages`, { text });
  expect(sent.status, JSON.stringify(sent.body)).toBe(200);
  return sent.body;
}

describe('a conversation interaction through the real mt serve on PostgreSQL', { timeout: 90_000 }, () => {
  it('four turns over REST: each reply waits in WaitingForInput, a SIGKILL and a deploy between turns lose nothing', async () => {
    const started = await client.startRun('support-desk-chat', { message: 'Hello, about order A-1001' });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const id = started.body.id;
    let run = await waiting(id);
    expect(run.status, JSON.stringify(run)).toBe('WaitingForInput');
    expect(run.result).toBe(REPLIES[0]);
    const versions = run.versions;
    expect(stack.upstream.requests.filter((r) => r.url === '/orders/A-1001')).toHaveLength(1);

    // While it waits for a message, a second message is refused until the first is answered, and empty text is.
    const empty = await client.request('POST', `/v1/runs/${id}/messages`, { text: '  ' });
    expect(empty.status).toBe(422);
    expect(empty.body.code).toBe('api:runs:message-empty');

    // The only process that executed it is killed outright between turns; a new `mt serve` takes the next message.
    await stack.servers[0]!.kill();
    const fresh = await startServe(stack.home, stack.env);
    stack.servers.push(fresh);
    client = api(fresh.url, stack.adminKey);

    const after = await send(id, 'It arrived broken.');
    expect(['Running', 'WaitingForInput']).toContain(after.status);
    run = await client.waitForRun(id, (r) => r.status === 'WaitingForInput' && r.result === REPLIES[1]);

    // A deploy in the middle: a new agent version with another model. The run keeps the versions it started with.
    await client.deploy([
      ...baseFiles(),
      desk('scripted:desk-v2', 'Be brief.'),
      conversation('support-desk-chat', 'desk-agent'),
    ]);
    await send(id, 'Yes, please refund it.');
    run = await client.waitForRun(id, (r) => r.status === 'WaitingForInput' && r.result === REPLIES[2]);
    await send(id, 'Thanks!');
    run = await client.waitForRun(id, (r) => r.status === 'WaitingForInput' && r.result === REPLIES[3]);
    expect(run.versions).toEqual(versions);

    const events = await client.events(id);
    expectWholeEvents(events);
    const models = events.filter((e) => e.type === 'model-response').map((e) => (e.data as { model: string }).model);
    expect(new Set(models)).toEqual(new Set(['scripted:desk']));
    const messages = events.filter((e) => e.type === 'user-message').map((e) => (e.data as { text: string }).text);
    expect(messages).toEqual(['It arrived broken.', 'Yes, please refund it.', 'Thanks!']);
    // The history is the events, in order: each reply stored with its wait, then the person's message.
    const order = events.map((e) => e.type).filter((t) => t === 'input-requested' || t === 'user-message');
    expect(order).toEqual([
      'input-requested',
      'user-message',
      'input-requested',
      'user-message',
      'input-requested',
      'user-message',
      'input-requested',
    ]);
    expect(stack.upstream.requests.filter((r) => r.url === '/orders/A-1001')).toHaveLength(1);

    // Cancel ends a waiting conversation at once; a message after that is refused.
    const cancelled = await client.request<RunView>('POST', `/v1/runs/${id}/cancel`, {});
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe('Cancelled');
    const late = await client.request('POST', `/v1/runs/${id}/messages`, { text: 'hello?' });
    expect(late.status).toBe(409);
    expect(late.body.code).toBe('api:runs:already-ended');
  });

  it('four turns through mt interaction-chat in a pseudo-terminal: tool calls shown as they happen, an approval asked inline', async () => {
    const refunds = () => stack.upstream.requests.filter((r) => r.url === '/orders/A-1001/refund');
    const before = refunds().length;
    const { code, shown } = await chatInTerminal(
      ['interaction-chat', 'pty-desk', '--input', 'message=Hello, my order A-1001'],
      { MT_API_URL: client.url, MT_API_KEY: stack.adminKey },
      [
        { after: `${PTY[0]}`, type: 'It arrived broken.' },
        { after: 'Approve this call?', type: 'y' },
        { after: `${PTY[1]}`, type: 'Thanks!' },
        { after: `${PTY[2]}`, type: 'No, that is all.' },
        { after: `${PTY[3]}`, type: '' },
      ],
    );
    expect(code, shown).toBe(0);
    // The tool calls, as they happened, before the replies that used them.
    expect(shown.indexOf('get-order')).toBeLessThan(shown.indexOf(PTY[0]));
    expect(shown).toMatch(/tool:\s+refund-order/);
    expect(shown.indexOf('refund-order returned')).toBeGreaterThan(shown.indexOf('Approve this call?'));
    expect(shown).toContain('left conversation');
    expect(refunds()).toHaveLength(before + 1);

    const id = /conversation ([0-9a-f-]{36})/.exec(shown)?.[1] ?? '';
    const run = await client.getRun(id);
    expect(run.status).toBe('WaitingForInput');
    expect(run.result).toBe(PTY[3]);
    const events = await client.events(id);
    expectWholeEvents(events);
    const messages = events.filter((e) => e.type === 'user-message').map((e) => (e.data as { text: string }).text);
    expect(messages).toEqual(['It arrived broken.', 'Thanks!', 'No, that is all.']);
    expect(events.find((e) => e.type === 'approval-answered')?.data).toMatchObject({ decision: 'approve' });
  });

  it("asks inline about each approval of a sub-agent's run, two in a row, naming the run that asks (#22)", async () => {
    const refunds = () => stack.upstream.requests.filter((r) => r.url === '/orders/A-1001/refund');
    const before = refunds().length;
    const { code, shown } = await chatInTerminal(
      ['interaction-chat', 'sub-desk', '--input', 'message=My kettle arrived broken'],
      { MT_API_URL: client.url, MT_API_KEY: stack.adminKey },
      [
        { after: 'Approve this call?', type: 'y' },
        { after: 'Approve this call?', type: 'y' },
        { after: 'SUB-1', type: '' },
      ],
    );
    expect(code, shown).toBe(0);
    const id = /conversation ([0-9a-f-]{36})/.exec(shown)?.[1] ?? '';
    const children = (await client.request<{ runs: RunView[] }>('GET', '/v1/runs?limit=200')).body.runs.filter(
      (r) => r.parentRunId === id,
    );
    expect(children).toHaveLength(1);
    // Each approval is shown with the child run that asks, before its prompt; the second after the first's call.
    const asks = [...shown.matchAll(/Run (\S+) waits for a person to approve this call:/g)].map((m) => m[1]);
    expect(asks).toEqual([children[0]!.id, children[0]!.id]);
    expect(shown.indexOf('"amount": 7')).toBeGreaterThan(shown.indexOf('refund-order returned'));
    expect(shown).toContain('SUB-1 Billing refunded both.');
    expect(
      refunds()
        .slice(before)
        .map((r) => JSON.parse(r.body).amount),
    ).toEqual([40, 7]);
    expect((await client.getRun(id)).status).toBe('WaitingForInput');
  });

  it('sends the model the whole history at each turn', async () => {
    const started = await client.startRun('chat', { message: 'first' });
    const id = started.body.id;
    await waiting(id);
    for (const [n, text] of ['second', 'third', 'fourth'].entries()) {
      await send(id, text);
      // Waiting again once the reply to this message is stored (n + 2 model turns so far).
      await client.waitForRun(id, (r) => r.status === 'WaitingForInput' || r.status === 'Failed');
      const events = await client.events(id);
      expect(events.filter((e) => e.type === 'model-response')).toHaveLength(n + 2);
    }
    const asked = stack.openai.server.requests.filter((r) =>
      r.conversation.userTexts.some((t) => t.includes('A customer writes: first')),
    );
    expect(asked).toHaveLength(4);
    expect(asked[3]!.conversation.userTexts).toEqual(['A customer writes: first', 'second', 'third', 'fourth']);
    const events = await client.events(id);
    expect(events.filter((e) => e.type === 'model-response')).toHaveLength(4);
  });

  it('the TS SDK: run resolves at the first reply, send at each next one', async () => {
    const mt = new Maitento({ baseUrl: client.url, apiKey: stack.adminKey });
    const first = await mt.interactionRuns.run('pty-desk', { inputs: { message: 'Hello, my order A-1001' } });
    expect(first.status).toBe('WaitingForInput');
    expect(first.result).toBe(PTY[0]);
    let asked = 0;
    const second = await mt.interactionRuns.send(first.id, 'It arrived broken.', {
      onWaiting: async (waiting) => {
        asked++;
        expect(waiting.pendingApproval?.functionName).toBe('refund-order');
        await mt.interactionRuns.reject(waiting.id, { reason: 'Not today' });
      },
    });
    expect(asked).toBe(1);
    expect(second.status).toBe('WaitingForInput');
    expect(second.result).toBe(PTY[1]);
    const third = await mt.interactionRuns.send(first.id, 'Thanks!');
    expect(third.result).toBe(PTY[2]);
    await expect(mt.interactionRuns.send(first.id, '')).rejects.toMatchObject({ code: 'api:runs:message-empty' });
  });

  it('ends a conversation idle past its maxIdle: Completed, the last reply its result; a message after is refused', async () => {
    const started = await client.startRun('idle-desk', { message: 'hi' });
    const id = started.body.id;
    const run = await client.waitForEnd(id, 20_000);
    expect(run.status).toBe('Completed');
    expect(run.result).toBe('Anything else?');
    const types = (await client.events(id)).map((e) => e.type);
    expect(types.slice(-2)).toEqual(['input-requested', 'conversation-ended']);
    const late = await client.request('POST', `/v1/runs/${id}/messages`, { text: 'hello?' });
    expect(late.status).toBe(409);
    expect(late.body.code).toBe('api:runs:already-ended');
  });

  it('refuses a message to a one-shot run waiting for an approval, to a cancelled run and to no run', async () => {
    const started = await client.startRun('support-desk', {
      message: 'My lamp of order A-1001 arrived broken, refund it',
    });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const pending = await client.waitForRun(started.body.id, (r) => r.status === 'PendingApproval');
    const refused = await client.request('POST', `/v1/runs/${pending.id}/messages`, { text: 'more' });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('api:runs:not-waiting-for-input');
    expect(refused.body.error).toContain('PendingApproval');
    const cancelled = await client.request('POST', `/v1/runs/${pending.id}/cancel`, {});
    expect(cancelled.body.status).toBe('Cancelled');
    const ended = await client.request('POST', `/v1/runs/${pending.id}/messages`, { text: 'more' });
    expect(ended.status).toBe(409);
    expect(ended.body.code).toBe('api:runs:already-ended');
    const missing = await client.request('POST', '/v1/runs/00000000-0000-4000-8000-000000000000/messages', {
      text: 'more',
    });
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('api:runs:not-found');
  });
});
