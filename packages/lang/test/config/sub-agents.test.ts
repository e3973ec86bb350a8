import { interactionTools } from '@maitento/lang';
import { describe, expect, it } from 'vitest';
import { compile, ordersConnector, where } from './helpers.js';

const agent = (functions: string, summary = 'Does things') =>
  `model = "scripted:x"\ninstructions = "i"\nsummary = ${JSON.stringify(summary)}\nfunctions = [ ${functions} ]\n`;

const tool = 'connector = @ref("orders")\nguidance = "Reads an order"\n';

describe('agents as tools', () => {
  it("builds an agent function and describes it to the model by the agent's summary, with one task string", () => {
    const repo = compile({
      'connectors/open-api/orders.mtr': ordersConnector,
      'external-operations/open-api/get-order.mtr': tool,
      'agents/triage-agent.mtr': agent('{ agent = @ref("billing-agent") }'),
      'agents/billing-agent.mtr': agent('{ ref = @ref("get-order") }', 'Answers billing questions'),
      'interactions/one-shot/triage.mtr': 'agent = { name = "Triage" agent = @ref("triage-agent") }\ntask = "t"\n',
    });
    expect(repo.diagnostics).toEqual([]);
    expect(repo.agents.find((a) => a.name === 'triage-agent')?.functions).toEqual([{ agent: 'billing-agent' }]);
    const [parent] = interactionTools(repo.interactions[0]!, repo);
    expect(parent!.tools).toEqual([]);
    expect(parent!.subAgents.map((s) => s.definition)).toEqual([
      {
        name: 'billing-agent',
        description: 'Answers billing questions',
        parameters: {
          type: 'object',
          properties: {
            task: { type: 'string', description: 'The task for billing-agent, with everything it needs to know' },
          },
          required: ['task'],
          additionalProperties: false,
        },
      },
    ]);
    const [child] = interactionTools(repo.interactions[0]!, repo, 'billing-agent');
    expect(child!.agentName).toBe('billing-agent');
    expect(child!.tools.map((t) => t.definition.name)).toEqual(['get-order']);
  });

  it('refuses a cycle of agents with one diagnostic naming the whole cycle', () => {
    const repo = compile({
      'agents/a-agent.mtr': agent('{ agent = @ref("b-agent") }'),
      'agents/b-agent.mtr': agent('{ agent = @ref("c-agent") }'),
      'agents/c-agent.mtr': agent('{ agent = @ref("a-agent") }'),
    });
    expect(repo.ok).toBe(false);
    expect(where(repo.diagnostics)).toEqual(['agents/a-agent.mtr:4:25 mtr:agent:cycle']);
    expect(repo.diagnostics[0]!.message).toBe(
      'agents hand tasks to each other in a cycle: a-agent -> b-agent -> c-agent -> a-agent',
    );
  });

  it('refuses an agent that hands tasks to itself', () => {
    const repo = compile({ 'agents/a-agent.mtr': agent('{ agent = @ref("a-agent") }') });
    expect(repo.diagnostics.map((d) => d.message)).toEqual([
      'agents hand tasks to each other in a cycle: a-agent -> a-agent',
    ]);
  });

  it('accepts a chain without a cycle (two agents handing to the same one)', () => {
    const repo = compile({
      'agents/a-agent.mtr': agent('{ agent = @ref("b-agent") }, { agent = @ref("c-agent") }'),
      'agents/b-agent.mtr': agent('{ agent = @ref("c-agent") }'),
      'agents/c-agent.mtr': agent(''),
    });
    expect(repo.diagnostics).toEqual([]);
  });

  it('needs a summary on an agent handed tasks, and one target per function', () => {
    const repo = compile({
      'connectors/open-api/orders.mtr': ordersConnector,
      'external-operations/open-api/get-order.mtr': tool,
      'agents/a-agent.mtr': agent('{ agent = @ref("b-agent") }, { ref = @ref("get-order") agent = @ref("b-agent") }'),
      'agents/b-agent.mtr': 'model = "scripted:x"\ninstructions = "i"\n',
    });
    expect(where(repo.diagnostics)).toEqual([
      'agents/a-agent.mtr:4:15 mtr:agent:summary-missing',
      'agents/a-agent.mtr:4:44 mtr:agent:function-target',
    ]);
  });

  it("lets a binding name an agent the interaction's agent hands tasks to, for that agent's tools only", () => {
    const files = (fn: string) => ({
      'connectors/open-api/orders.mtr': ordersConnector,
      'external-operations/open-api/get-order.mtr': tool,
      'external-operations/open-api/other-order.mtr': tool,
      'agents/triage-agent.mtr': agent('{ agent = @ref("billing-agent") }'),
      'agents/billing-agent.mtr': agent('{ ref = @ref("get-order") }'),
      'interactions/one-shot/triage.mtr': `agent = { name = "Triage" agent = @ref("triage-agent") }
task = "t"
inputs.functions.binding = [
  { name = "order" function = @ref("${fn}") agent = @ref("billing-agent") target = "orderId" type = "path" }
]
`,
    });
    const ok = compile(files('get-order'));
    expect(ok.diagnostics).toEqual([]);
    const [child] = interactionTools(ok.interactions[0]!, ok, 'billing-agent');
    expect(JSON.stringify(child!.tools[0]!.definition.parameters)).not.toContain('orderId');
    const [parent] = interactionTools(ok.interactions[0]!, ok);
    expect(parent!.tools).toEqual([]);
    const refused = compile(files('other-order'));
    expect(refused.diagnostics.map((d) => d.code)).toEqual(['mtr:binding:function-not-given']);
  });
});
