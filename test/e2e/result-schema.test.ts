import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectWholeEvents } from './helpers/api.js';
import { runsRepoFiles } from './helpers/config-repo.js';
import { type RunsStack, startRunsStack } from './helpers/stack.js';
import { runMt } from './support/harness.js';

// Answers in a declared shape (issue #21, test 3) on the real `mt serve` on PostgreSQL: the scripted model plays the
// structured answers (scripted-models files of the test's own), the orders tool calls a local upstream, and the fake
// OpenAI server shows what a real provider is sent (response_format json_schema) and answers prose twice.
const SCHEMA = {
  type: 'object',
  properties: {
    refundable: { type: 'boolean' },
    amount: { type: 'number', minimum: 0 },
    reason: { type: 'string' },
  },
  required: ['refundable', 'amount', 'reason'],
  additionalProperties: false,
};
const VALID = { refundable: true, amount: 40, reason: 'The lamp arrived broken' };

const agent = (name: string, model: string, tools: boolean) => ({
  path: `agents/${name}.mtr`,
  content: `model = "${model}"
instructions = "Check the order and answer with the JSON object asked for."
${tools ? 'functions = [\n  { ref = @ref("get-order") }\n]\n' : ''}`,
});
const interaction = (name: string, agentName: string, schema: string) => ({
  path: `interactions/one-shot/${name}.mtr`,
  content: `agent = {
  name = "Checker"
  agent = @ref("${agentName}")
}
task = "Can order %%orderId%% be refunded?"
inputs.prompts = [
  { name = "orderId" required = true }
]
result.schema = ${schema}
`,
});

let stack: RunsStack;
let scripts: string;

beforeAll(async () => {
  scripts = await mkdtemp(join(tmpdir(), 'mt-e2e-scripts-'));
  // A tool call, then the object: the result.
  await writeFile(
    join(scripts, 'shape-valid.json'),
    JSON.stringify([
      { toolCalls: [{ name: 'get-order', arguments: { additionalInputs: { 'path.orderId': 'A-1001' } } }] },
      { object: VALID },
    ]),
  );
  // Prose first, then (told the errors) an object missing a field, then it would be right: the run fails first.
  await writeFile(
    join(scripts, 'shape-retry.json'),
    JSON.stringify([{ object: { refundable: false, amount: -1 } }, { object: VALID }]),
  );
  stack = await startRunsStack({ deploy: false, env: { MT_SCRIPTED_MODELS: scripts } });
  const secret = await stack.api.request('POST', '/v1/secrets', { name: 'orders-api-key', value: 'sk-shape-e2e' });
  expect(secret.status).toBe(201);
  await stack.api.deploy([
    ...runsRepoFiles({ origin: stack.upstream.origin }),
    agent('shape-valid', 'scripted:shape-valid', true),
    agent('shape-retry', 'scripted:shape-retry', false),
    agent('shape-openai', 'openai:gpt-4o-mini', false),
    interaction('check-valid', 'shape-valid', '@json("schemas/check.json")'),
    interaction('check-retry', 'shape-retry', '@json("schemas/check.json")'),
    interaction(
      'check-openai',
      'shape-openai',
      `{
  type = "object"
  properties = { refundable = { type = "boolean" } }
  required = ["refundable"]
  additionalProperties = false
}`,
    ),
    { path: 'schemas/check.json', content: JSON.stringify(SCHEMA) },
  ]);
}, 90_000);

afterAll(async () => {
  await stack?.close();
  if (scripts) await rm(scripts, { recursive: true, force: true });
});

function mt(args: string[]) {
  return runMt(args, { home: stack.home, env: { MT_API_URL: stack.api.url, MT_API_KEY: stack.adminKey } });
}

describe('an interaction with result.schema on PostgreSQL through the real mt serve', { timeout: 60_000 }, () => {
  it('a valid answer is the object: in REST, in the stored events, and in the CLI --json', async () => {
    const started = await stack.api.startRun('check-valid', { orderId: 'A-1001' });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const run = await stack.api.waitForEnd(started.body.id);
    expect(run.status, JSON.stringify(run)).toBe('Completed');
    expect(run.result).toEqual(VALID);
    expect(stack.upstream.requests.filter((r) => r.url === '/orders/A-1001')).toHaveLength(1);

    const events = await stack.api.events(run.id);
    expectWholeEvents(events);
    expect(events.map((e) => e.type)).not.toContain('result-invalid');
    expect(events.at(-1)).toMatchObject({
      type: 'run-completed',
      data: { result: JSON.stringify(VALID), structured: true, scripted: true },
    });

    const status = await mt(['interaction-status', run.id, '--json']);
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout).result).toEqual(VALID);
    const human = await mt(['interaction-status', run.id]);
    expect(human.stdout).toContain('"refundable": true');

    const list = await stack.api.request('GET', '/v1/runs?interaction=check-valid');
    expect(list.status).toBe(200);
    // A list shows the result's first characters as text (its JSON), as for any result.
    expect(list.body.runs[0].result).toBe(JSON.stringify(VALID));
  });

  it('a wrong answer is retried once with its errors; the second answer is the result', async () => {
    const started = await stack.api.startRun('check-retry', { orderId: 'A-1001' });
    const run = await stack.api.waitForEnd(started.body.id);
    expect(run.status, JSON.stringify(run)).toBe('Completed');
    expect(run.result).toEqual(VALID);
    const events = await stack.api.events(run.id);
    const types = events.map((e) => e.type);
    expect(types).toEqual(['run-started', 'model-response', 'result-invalid', 'model-response', 'run-completed']);
    const invalid = events.find((e) => e.type === 'result-invalid');
    expect(invalid?.data).toEqual({
      step: 1,
      errors: ['result.reason is required', 'result.amount must be >= 0'],
    });
  });

  it('twice invalid fails with api:runs:result-invalid, the answers in its events; the provider was asked for the schema', async () => {
    const started = await stack.api.startRun('check-openai', { orderId: 'C-3003' });
    const run = await stack.api.waitForEnd(started.body.id);
    expect(run.status, JSON.stringify(run)).toBe('Failed');
    expect(run.error?.code).toBe('api:runs:result-invalid');
    expect(run.error?.message).toContain('not JSON');
    expect(run.result).toBeNull();

    const events = await stack.api.events(run.id);
    expect(events.map((e) => e.type)).toEqual([
      'run-started',
      'model-response',
      'result-invalid',
      'model-response',
      'result-invalid',
      'run-failed',
    ]);
    const answers = events.filter((e) => e.type === 'model-response').map((e) => (e.data as { text: string }).text);
    expect(answers).toEqual(['No scenario for tools ', 'No scenario for tools ']);

    // Both requests asked OpenAI for JSON of the interaction's schema; the second one carried the errors.
    const asked = stack.openai.server.requests.filter((r) =>
      r.conversation.userTexts.some((t) => t.includes('Can order C-3003 be refunded?')),
    );
    expect(asked).toHaveLength(2);
    for (const request of asked) {
      const format = (request.body as { response_format?: { type: string; json_schema?: { schema: unknown } } })
        .response_format;
      expect(format?.type).toBe('json_schema');
      expect(format?.json_schema?.schema).toMatchObject({
        type: 'object',
        properties: { refundable: { type: 'boolean' } },
        required: ['refundable'],
      });
    }
    const told = asked[1].conversation.userTexts.join('\n');
    expect(told).toContain('Your answer does not match the required JSON Schema');
    expect(told).toContain('the answer is not JSON');
  });
});
