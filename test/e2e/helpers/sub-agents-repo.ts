import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ordersRepo, type RepoFile } from '@maitento/testkit';
import { expect } from 'vitest';
import { ORDERS_SECRET, type RunsStack, type RunsStackOptions, startRunsStack } from './stack.js';

// The config repo and scripts of the agents-as-tools tests: a triage agent hands a refund to a billing agent whose
// refund tool needs approval (the scripted model plays each agent from its own script), a chain of five agents for
// the depth limit, and a child whose tool call an upstream can hold.
export const FIRST = { amount: 40, reason: 'The lamp arrived broken' };
export const REDRAFT = { amount: 25, reason: 'Part refund: the lamp still works' };
export const SHIPPING = { amount: 7, reason: 'Shipping of the broken lamp' };
const refundCall = (request: object) => ({
  toolCalls: [{ name: 'refund-order', arguments: { request, additionalInputs: { 'path.orderId': 'A-1001' } } }],
});
const handTo = (agent: string, task: string) => ({ toolCalls: [{ name: agent, arguments: { task } }] });

const SCRIPTS: Record<string, unknown[]> = {
  triage: [handTo('billing-agent', 'Refund order A-1001: the lamp arrived broken'), { text: 'Billing handled it.' }],
  billing: [refundCall(FIRST), { text: 'Refunded 40 for A-1001 (refund R-77).' }],
  'triage-redraft': [handTo('billing-redraft-agent', 'Refund order A-1001'), { text: 'Billing handled it.' }],
  'billing-redraft': [refundCall(FIRST), refundCall(REDRAFT), { text: 'Refunded 25 for A-1001.' }],
  'triage-twice': [
    handTo('billing-twice-agent', 'Refund order A-1001 and its shipping'),
    { text: 'Billing did both.' },
  ],
  'billing-twice': [refundCall(FIRST), refundCall(SHIPPING), { text: 'Refunded 40 and the shipping (7).' }],
  'triage-slow': [handTo('billing-slow-agent', 'Look up order SLOW-1'), { text: 'Triage done.' }],
  'billing-slow': [
    { toolCalls: [{ name: 'get-order', arguments: { additionalInputs: { 'path.orderId': 'SLOW-1' } } }] },
    { text: 'Order SLOW-1 was delivered.' },
  ],
  'triage-failing': [handTo('billing-failing-agent', 'Look up order GONE-1'), { text: 'Billing handled it.' }],
  'billing-failing': [
    { toolCalls: [{ name: 'get-order', arguments: { additionalInputs: { 'path.orderId': 'GONE-1' } } }] },
    { text: 'Order GONE-1 was delivered.' },
  ],
  'triage-two': [
    {
      toolCalls: [
        { name: 'lookup-a-agent', arguments: { task: 'Look up A' } },
        { name: 'lookup-b-agent', arguments: { task: 'Look up B' } },
      ],
    },
    { text: 'Both looked up.' },
  ],
  'lookup-a': [{ text: 'A is fine.' }],
  'lookup-b': [{ text: 'B is fine.' }],
  // Each level answers after a failed call on purpose (its `onToolError` turn): the one below it hit the depth limit.
  'level-0': [handTo('level-1', 'go deeper'), { text: 'level 0 done', onToolError: { text: 'level 0 done' } }],
  'level-1': [handTo('level-2', 'go deeper'), { text: 'level 1 done', onToolError: { text: 'level 1 done' } }],
  'level-2': [handTo('level-3', 'go deeper'), { text: 'level 2 done', onToolError: { text: 'level 2 done' } }],
  'level-3': [
    handTo('level-4', 'go deeper'),
    { text: 'level 3 done', onToolError: { text: 'level 3 done without level 4' } },
  ],
  'level-4': [{ text: 'level 4 should never run' }],
};

export function agent(model: string, summary: string, functions: string): string {
  return `model = "scripted:${model}"\ninstructions = "You do your part."\nsummary = "${summary}"\nfunctions = [ ${functions} ]\n`;
}

function interaction(agentName: string): string {
  return `agent = { name = "Triage" agent = @ref("${agentName}") }\ntask = "A customer writes: %%message%%"\ninputs.prompts = [ { name = "message" required = true } ]\n`;
}

function repoFiles(origin: string): RepoFile[] {
  const files: RepoFile[] = [
    ...ordersRepo({ origin, model: 'scripted:support', secret: 'orders-api-key' }),
    {
      path: 'agents/triage-agent.mtr',
      content: agent('triage', 'Routes questions', '{ agent = @ref("billing-agent") }'),
    },
    {
      path: 'agents/billing-agent.mtr',
      content: agent('billing', 'Refunds orders', '{ ref = @ref("get-order") }, { ref = @ref("refund-order") }'),
    },
    {
      path: 'agents/triage-redraft-agent.mtr',
      content: agent('triage-redraft', 'Routes questions', '{ agent = @ref("billing-redraft-agent") }'),
    },
    {
      path: 'agents/billing-redraft-agent.mtr',
      content: agent('billing-redraft', 'Refunds orders', '{ ref = @ref("refund-order") }'),
    },
    {
      path: 'agents/triage-twice-agent.mtr',
      content: agent('triage-twice', 'Routes questions', '{ agent = @ref("billing-twice-agent") }'),
    },
    {
      path: 'agents/billing-twice-agent.mtr',
      content: agent('billing-twice', 'Refunds orders and shipping', '{ ref = @ref("refund-order") }'),
    },
    {
      path: 'agents/triage-slow-agent.mtr',
      content: agent('triage-slow', 'Routes questions', '{ agent = @ref("billing-slow-agent") }'),
    },
    {
      path: 'agents/billing-slow-agent.mtr',
      content: agent('billing-slow', 'Looks up orders', '{ ref = @ref("get-order") }'),
    },
    {
      path: 'agents/triage-failing-agent.mtr',
      content: agent('triage-failing', 'Routes questions', '{ agent = @ref("billing-failing-agent") }'),
    },
    {
      path: 'agents/billing-failing-agent.mtr',
      content: agent('billing-failing', 'Looks up orders', '{ ref = @ref("get-order") }'),
    },
    { path: 'interactions/one-shot/triage-failing.mtr', content: interaction('triage-failing-agent') },
    {
      path: 'agents/triage-two-agent.mtr',
      content: agent(
        'triage-two',
        'Routes questions',
        '{ agent = @ref("lookup-a-agent") }, { agent = @ref("lookup-b-agent") }',
      ),
    },
    { path: 'agents/lookup-a-agent.mtr', content: agent('lookup-a', 'Looks up A', '') },
    { path: 'agents/lookup-b-agent.mtr', content: agent('lookup-b', 'Looks up B', '') },
    { path: 'interactions/one-shot/triage-two.mtr', content: interaction('triage-two-agent') },
    { path: 'interactions/one-shot/triage.mtr', content: interaction('triage-agent') },
    { path: 'interactions/one-shot/triage-twice.mtr', content: interaction('triage-twice-agent') },
    { path: 'interactions/one-shot/triage-slow.mtr', content: interaction('triage-slow-agent') },
    { path: 'interactions/one-shot/triage-redraft.mtr', content: interaction('triage-redraft-agent') },
    { path: 'interactions/one-shot/deep.mtr', content: interaction('level-0') },
  ];
  for (let level = 0; level <= 4; level++) {
    const next = level < 4 ? `{ agent = @ref("level-${level + 1}") }` : '';
    files.push({ path: `agents/level-${level}.mtr`, content: agent(`level-${level}`, `Level ${level}`, next) });
  }
  return files;
}

/**
 * Starts a runs stack whose scripted model reads the scripts above from a temporary folder, creates the orders
 * secret and deploys the repo; `close` removes the scripts too.
 */
export async function startSubAgentsStack(options: RunsStackOptions = {}): Promise<RunsStack> {
  const scripts = await mkdtemp(join(tmpdir(), 'mt-e2e-scripts-'));
  for (const [name, turns] of Object.entries(SCRIPTS)) {
    await writeFile(join(scripts, `${name}.json`), JSON.stringify(turns));
  }
  const stack = await startRunsStack({
    ...options,
    deploy: false,
    env: { ...options.env, MT_SCRIPTED_MODELS: scripts },
  });
  const close = stack.close;
  stack.close = async () => {
    await close();
    await rm(scripts, { recursive: true, force: true });
  };
  const secret = await stack.api.request('POST', '/v1/secrets', { name: 'orders-api-key', value: ORDERS_SECRET });
  expect(secret.status, JSON.stringify(secret.body)).toBe(201);
  await stack.api.deploy(repoFiles(stack.upstream.origin));
  return stack;
}
