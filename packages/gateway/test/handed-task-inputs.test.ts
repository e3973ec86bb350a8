import { compileRepo } from '@maitento/lang';
import { credentialOf, runBindingsOf } from '@maitento/gateway';
import { describe, expect, it } from 'vitest';

// Which run inputs reach a call: for the interaction's own agent, those naming it or no agent; for an agent handed a
// task by another (a child run), only those naming it.
const files = {
  'connectors/open-api/orders.mtr': `method = "GET"
url = "https://orders.example.com/orders/{orderId}"
description = "One order"
auth = "Header"
parameters.path = [ { name = "orderId" } ]
parameters.query = [ { name = "shop" } ]
`,
  'external-operations/open-api/get-order.mtr': 'connector = @ref("orders")\nguidance = "Reads an order"\n',
  'agents/triage-agent.mtr':
    'model = "scripted:x"\ninstructions = "i"\nfunctions = [ { agent = @ref("billing-agent") } ]\n',
  'agents/billing-agent.mtr':
    'model = "scripted:x"\ninstructions = "i"\nsummary = "Billing"\nfunctions = [ { ref = @ref("get-order") } ]\n',
};

// The interaction hands get-order to its own agent too (functions.openApi) when `openApi`.
function compiled(inputs: string, openApi = true, codes: string[] = []) {
  const repo = compileRepo(
    Object.entries({
      ...files,
      'interactions/one-shot/triage.mtr': `agent = { name = "Triage" agent = @ref("triage-agent") }
task = "t"
${openApi ? 'functions.openApi = [ { ref = @ref("get-order") } ]\n' : ''}${inputs}`,
    }).map(([path, content]) => ({ path, content })),
  );
  expect(repo.diagnostics.map((d) => d.code)).toEqual(codes);
  return { interaction: repo.interactions[0]!, tool: repo.tools[0]! };
}

const readSecret = async (ref: { id: string } | { name: string }) => ('id' in ref ? `value-of-${ref.id}` : undefined);

describe('run inputs of an agent handed a task', () => {
  it('takes only the bindings and auth inputs that name it, never those for any agent', async () => {
    const { interaction, tool } = compiled(
      `inputs.functions.binding = [
  { name = "order" function = @ref("get-order") agent = @ref("billing-agent") target = "orderId" type = "path" },
  { name = "shop" function = @ref("get-order") target = "shop" type = "query" },
]
inputs.functions.auth = [ { name = "shopKey" function = @ref("get-order") header = "X-Api-Key" } ]
`,
      true,
      // The compiler says so too: billing-agent's get-order would be called without a secret.
      ['api:connectors:secret-missing'],
    );
    const inputs = { order: 'A-1', shop: 'north', shopKey: 'secret-1' };
    const child = { interaction, agent: 'billing-agent', handedTask: true, inputs };
    expect(runBindingsOf(tool, child).map((b) => b.binding.name)).toEqual(['order']);
    // The auth input names no agent: the child's call does not get the run's secret.
    expect(await credentialOf({ tool, run: child, readSecret })).toBeUndefined();
    const top = { interaction, agent: 'triage-agent', inputs };
    expect(runBindingsOf(tool, top).map((b) => b.binding.name)).toEqual(['shop']);
    expect(await credentialOf({ tool, run: top, readSecret })).toEqual({
      header: 'X-Api-Key',
      value: 'value-of-secret-1',
    });
  });

  it('gives the child the run-chosen secret when the auth input names its agent', async () => {
    const { interaction, tool } = compiled(
      'inputs.functions.auth = [ { name = "shopKey" function = @ref("get-order") agent = @ref("billing-agent") header = "X-Api-Key" } ]\n',
      false,
    );
    const run = { interaction, agent: 'billing-agent', handedTask: true, inputs: { shopKey: 'secret-2' } };
    expect(await credentialOf({ tool, run, readSecret })).toEqual({ header: 'X-Api-Key', value: 'value-of-secret-2' });
  });
});

describe("a run-chosen secret the run's key may not use", () => {
  it('is never read: the credential says forbidden, naming the input; a granted one is read and sent', async () => {
    const { interaction, tool } = compiled(
      'inputs.functions.auth = [ { name = "shopKey" function = @ref("get-order") header = "X-Api-Key" } ]\n',
      true,
      ['api:connectors:secret-missing'],
    );
    const read: unknown[] = [];
    const reading = async (ref: { id: string } | { name: string }) => {
      read.push(ref);
      return readSecret(ref);
    };
    const asked: string[] = [];
    const mayUseSecret = async (id: string) => {
      asked.push(id);
      return id === 'granted';
    };
    const run = (shopKey: string) => ({ interaction, agent: 'triage-agent', inputs: { shopKey }, mayUseSecret });
    expect(await credentialOf({ tool, run: run('not-granted'), readSecret: reading })).toEqual({
      forbidden: { secret: 'not-granted', input: 'shopKey' },
    });
    expect(read).toEqual([]);
    expect(await credentialOf({ tool, run: run('granted'), readSecret: reading })).toEqual({
      header: 'X-Api-Key',
      value: 'value-of-granted',
    });
    expect(asked).toEqual(['not-granted', 'granted']);
  });
});
