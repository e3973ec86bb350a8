import { ordersRepo, type RepoFile } from '@maitento/testkit';

// The run-tree tests' config repo and scripts (on top of the orders repo): `lookup-tree` hands a lookup to a child
// agent whose one call needs no approval; `refund-tree` hands a refund to a child whose call needs a person's
// approval, then looks the order up at once; `refund-deep` hands the same refund two levels down (a grandchild asks).
const handTo = (agent: string, task: string) => ({ toolCalls: [{ name: agent, arguments: { task } }] });

export const REFUND = { amount: 40, reason: 'The lamp arrived broken' };

export const TREE_SCRIPTS: Record<string, unknown[]> = {
  'lookup-top': [handTo('lookup-child', 'Look up order SLOW-1'), { text: 'Looked up.' }],
  'lookup-child': [
    { toolCalls: [{ name: 'get-order', arguments: { additionalInputs: { 'path.orderId': 'SLOW-1' } } }] },
    { text: 'SLOW-1 was delivered.' },
  ],
  'refund-top': [handTo('refund-child', 'Refund order A-1001'), { text: 'Refund handled.' }],
  // The refund (a person approves it), then a lookup made at once: both on the tree's authority.
  'refund-child': [
    {
      toolCalls: [
        { name: 'refund-order', arguments: { request: REFUND, additionalInputs: { 'path.orderId': 'A-1001' } } },
      ],
    },
    { toolCalls: [{ name: 'get-order', arguments: { additionalInputs: { 'path.orderId': 'A-1001' } } }] },
    { text: 'Refunded 40.' },
  ],
  'deep-top': [handTo('deep-middle', 'Have the refund made'), { text: 'Deep refund handled.' }],
  'deep-middle': [handTo('refund-child', 'Refund order A-1001'), { text: 'Middle done.' }],
};

function agent(script: string, summary: string, functions: string): string {
  return `model = "scripted:${script}"\ninstructions = "You do your part."\nsummary = "${summary}"\nfunctions = [ ${functions} ]\n`;
}

function interaction(agentName: string): string {
  return `agent = { name = "Top" agent = @ref("${agentName}") }\ntask = "A customer writes: %%message%%"\ninputs.prompts = [ { name = "message" required = true } ]\n`;
}

/** The orders repo and the agents and interactions of the run-tree tests, calling `origin`. */
export function runTreeRepo(origin: string): RepoFile[] {
  return [
    ...ordersRepo({ origin }),
    { path: 'agents/lookup-top.mtr', content: agent('lookup-top', 'Routes', '{ agent = @ref("lookup-child") }') },
    {
      path: 'agents/lookup-child.mtr',
      content: agent('lookup-child', 'Looks up orders', '{ ref = @ref("get-order") }'),
    },
    { path: 'agents/refund-top.mtr', content: agent('refund-top', 'Routes', '{ agent = @ref("refund-child") }') },
    {
      path: 'agents/refund-child.mtr',
      content: agent('refund-child', 'Refunds orders', '{ ref = @ref("refund-order") }, { ref = @ref("get-order") }'),
    },
    { path: 'agents/deep-top.mtr', content: agent('deep-top', 'Routes', '{ agent = @ref("deep-middle") }') },
    { path: 'agents/deep-middle.mtr', content: agent('deep-middle', 'Routes on', '{ agent = @ref("refund-child") }') },
    { path: 'interactions/one-shot/lookup-tree.mtr', content: interaction('lookup-top') },
    { path: 'interactions/one-shot/refund-tree.mtr', content: interaction('refund-top') },
    { path: 'interactions/one-shot/refund-deep.mtr', content: interaction('deep-top') },
  ];
}
