import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectWholeEvents, type RunView } from './helpers/api.js';
import { writeRepo } from './helpers/config-repo.js';
import { type LocalMcpServer, type LocalMcpTool, startLocalMcpServer } from './helpers/mcp-upstream.js';
import { type RunsStack, startRunsStack } from './helpers/stack.js';
import { runMt } from './support/harness.js';

// A remote MCP server as a connector, end to end through the real `mt serve` and `mt deploy`: a local MCP
// server (the SDK's own Server over Streamable HTTP on 127.0.0.1) is listed at deploy, a change of its tool
// shows in the plan, and a run of the scripted model calls it with a binding and the secret attached.
const TRACKER_SECRET = 'tr-secret-mcp-e2e-8d2b6f1c';

const searchV1: LocalMcpTool = {
  name: 'search_issues',
  description: 'Searches the issues of a repository',
  inputSchema: {
    type: 'object',
    properties: {
      repo: { type: 'string', description: 'owner/name' },
      query: { type: 'string', description: 'Words to look for' },
    },
    required: ['repo', 'query'],
    additionalProperties: false,
  },
  answer: (args, headers) =>
    `2 issues in ${String(args.repo)} match "${String(args.query)}" (asked with ${String(headers.authorization)})`,
};
// The same tool after its server changed: a new required argument, which breaks callers.
const searchV2: LocalMcpTool = {
  ...searchV1,
  inputSchema: {
    ...searchV1.inputSchema,
    properties: { ...(searchV1.inputSchema.properties as object), state: { type: 'string', enum: ['open', 'closed'] } },
    required: ['repo', 'query', 'state'],
  },
};
// A tool that changes something: it needs a person's approval, and its repository is a run input.
const createIssue: LocalMcpTool = {
  name: 'create_issue',
  description: 'Opens an issue',
  inputSchema: {
    type: 'object',
    properties: { repo: { type: 'string' }, title: { type: 'string' } },
    required: ['repo', 'title'],
  },
  answer: (args) => `opened ${String(args.repo)}#42: ${String(args.title)}`,
};
const other: LocalMcpTool = {
  name: 'list_labels',
  description: 'Lists labels',
  inputSchema: { type: 'object', properties: {} },
  answer: () => 'bug, feature',
};

function repoFiles(mcpUrl: string, tool = 'search_issues') {
  return [
    {
      path: 'connectors/mcp/issue-search.mtr',
      content: `url = "${mcpUrl}"\ntool = "${tool}"\nauth = "Header"\n`,
    },
    {
      path: 'external-operations/open-api/search-issues.mtr',
      content: `connector = @ref("issue-search")
guidance = "Searches the shop's issue tracker."
auth = { header = "Authorization" secret = @ref("tracker-key") }
bindings.request:repo = "acme/shop"
`,
    },
    {
      path: 'agents/triage-agent.mtr',
      content: `model = "scripted:triage"
instructions = "Find issues that match what the customer reports."
functions = [ { ref = @ref("search-issues") } ]
`,
    },
    {
      path: 'connectors/mcp/issue-create.mtr',
      content: `url = "${mcpUrl}"\ntool = "create_issue"\nauth = "Header"\n`,
    },
    {
      path: 'external-operations/open-api/file-issue.mtr',
      content: `connector = @ref("issue-create")
guidance = "Opens an issue in the tracker."
auth = { header = "Authorization" secret = @ref("tracker-key") }
requiresApproval = true
`,
    },
    {
      path: 'agents/reporter-agent.mtr',
      content: `model = "scripted:reporter"
instructions = "File an issue for what the customer reports."
functions = [ { ref = @ref("file-issue") } ]
`,
    },
    {
      path: 'interactions/one-shot/report.mtr',
      content: `agent = { name = "Reporter" agent = @ref("reporter-agent") }
task = "A customer reports: %%message%%"
inputs.prompts = [ { name = "message" description = "What the customer wrote" required = true } ]
inputs.functions.binding = [
  { name = "repo" function = @ref("file-issue") agent = @ref("reporter-agent") target = "repo" type = "request" required = true },
]
`,
    },
    {
      path: 'interactions/one-shot/triage.mtr',
      content: `agent = { name = "Triage" agent = @ref("triage-agent") }
task = "A customer reports: %%message%%"
inputs.prompts = [ { name = "message" description = "What the customer wrote" required = true } ]
`,
    },
  ];
}

let stack: RunsStack;
let mcp: LocalMcpServer;
let scripts: string;

beforeAll(async () => {
  scripts = await mkdtemp(join(tmpdir(), 'mt-e2e-mcp-scripts-'));
  await writeFile(
    join(scripts, 'triage.json'),
    JSON.stringify([
      { toolCalls: [{ name: 'search-issues', arguments: { request: { query: 'broken lamp' } } }] },
      { text: 'There are known issues about broken lamps.' },
    ]),
  );
  await writeFile(
    join(scripts, 'reporter.json'),
    JSON.stringify([
      { toolCalls: [{ name: 'file-issue', arguments: { request: { title: 'Lamp arrives broken' } } }] },
      { text: 'Filed.' },
    ]),
  );
  mcp = await startLocalMcpServer([searchV1, createIssue, other]);
  stack = await startRunsStack({ deploy: false, env: { MT_SCRIPTED_MODELS: scripts } });
  const secret = await stack.api.request('POST', '/v1/secrets', { name: 'tracker-key', value: TRACKER_SECRET });
  expect(secret.status, JSON.stringify(secret.body)).toBe(201);
}, 90_000);

afterAll(async () => {
  await stack?.close();
  await mcp?.close();
  if (scripts) await rm(scripts, { recursive: true, force: true });
});

describe('an MCP server as a connector', { timeout: 60_000 }, () => {
  it('deploys: the remote tool is listed with the secret, and its input schema becomes the model-facing definition', async () => {
    await stack.api.deploy(repoFiles(mcp.url));
    expect(mcp.listings).toBeGreaterThan(0);
    const connector = await stack.api.request<{ resource: Record<string, unknown> }>(
      'GET',
      '/v1/connectors/issue-search',
    );
    expect(connector.status, JSON.stringify(connector.body)).toBe(200);
    expect(connector.body.resource).toMatchObject({
      mcp: { url: mcp.url, tool: 'search_issues' },
      description: 'Searches the issues of a repository',
      schema: { request: searchV1.inputSchema },
    });
    const tool = await stack.api.request<{ definition: { parameters: unknown } }>('GET', '/v1/extops/search-issues');
    expect(tool.status, JSON.stringify(tool.body)).toBe(200);
    // The model sees query, not repo: the binding fixes it.
    const shown = JSON.stringify(tool.body.definition.parameters);
    expect(shown).toContain('query');
    expect(shown).not.toContain('owner/name');
  });

  it('calls the remote tool from a run: the binding merged, the secret sent and masked in what the model gets', async () => {
    const started = await stack.api.startRun('triage', { message: 'My lamp is broken' });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const done: RunView = await stack.api.waitForEnd(started.body.id);
    expect(done.status, JSON.stringify(done)).toBe('Completed');
    const calls = mcp.calls.filter((c) => c.tool === 'search_issues');
    expect(calls).toHaveLength(1);
    expect(calls[0].arguments).toEqual({ repo: 'acme/shop', query: 'broken lamp' });
    // The seed's rule for an Authorization header: a value without a space is sent as a bearer token.
    expect(calls[0].headers.authorization).toBe(`Bearer ${TRACKER_SECRET}`);
    const events = await stack.api.events(started.body.id);
    expectWholeEvents(events);
    const result = events.find((e) => e.type === 'tool-result');
    expect(result?.data).toMatchObject({ ok: true, name: 'search-issues' });
    expect(String(result?.data.result)).toContain('2 issues in acme/shop match "broken lamp"');
    expect(JSON.stringify(events)).not.toContain(TRACKER_SECRET);
  });

  it('asks a person before a call of an MCP tool that requires approval, then makes it once with the run input', async () => {
    const started = await stack.api.startRun('report', { message: 'The lamp arrived broken', repo: 'acme/lamps' });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const waiting = await stack.api.waitForRun(started.body.id, (r) => r.status !== 'Running');
    expect(waiting.status, JSON.stringify(waiting)).toBe('PendingApproval');
    // The person sees the call as it will be made: the model's title and the run's repository.
    expect(JSON.parse(waiting.pendingApproval!.argumentsJson).request).toEqual({
      title: 'Lamp arrives broken',
      repo: 'acme/lamps',
    });
    expect(mcp.calls.filter((c) => c.tool === 'create_issue')).toHaveLength(0);
    const approved = await stack.api.request('POST', `/v1/approvals/${waiting.pendingApproval!.id}/approve`, {});
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    const done = await stack.api.waitForEnd(started.body.id);
    expect(done.status, JSON.stringify(done)).toBe('Completed');
    const calls = mcp.calls.filter((c) => c.tool === 'create_issue');
    expect(calls.map((c) => c.arguments)).toEqual([{ repo: 'acme/lamps', title: 'Lamp arrives broken' }]);
    const events = await stack.api.events(started.body.id);
    expect(String(events.find((e) => e.type === 'tool-result')?.data.result)).toContain('opened acme/lamps#42');
  });

  it('mt extop-call of an MCP tool lists the server first and validates the arguments against its schema', async () => {
    const dir = await writeRepo(repoFiles(mcp.url));
    const env = { MT_EGRESS_ALLOW: '127.0.0.1' };
    const secret = `tracker-key=${TRACKER_SECRET}`;
    const before = mcp.calls.length;
    const wrong = await runMt(
      ['extop-call', 'search-issues', '--repo', dir, '--args', '{"request":{"query":5}}', '--secret', secret],
      { home: stack.home, env },
    );
    expect(wrong.code, wrong.stderr).toBe(1);
    expect(wrong.stderr).toContain('api:gateway:request-invalid');
    expect(mcp.calls).toHaveLength(before);
    const made = await runMt(
      ['extop-call', 'search-issues', '--repo', dir, '--args', '{"request":{"query":"lamp"}}', '--secret', secret],
      { home: stack.home, env },
    );
    await rm(dir, { recursive: true, force: true });
    expect(made.code, made.stderr).toBe(0);
    expect(made.stdout).toContain('2 issues in acme/shop match "lamp" (asked with Bearer [secret])');
    expect(made.stdout + made.stderr).not.toContain(TRACKER_SECRET);
    expect(mcp.calls.at(-1)?.arguments).toEqual({ repo: 'acme/shop', query: 'lamp' });
  });

  it('shows a change of the remote tool in the plan as breaking, and deploys it as a new version', async () => {
    mcp.tools = [searchV2, createIssue, other];
    const dir = await writeRepo(repoFiles(mcp.url));
    // `mt deploy` compiles locally first, by the same address rules: the local MCP server is on 127.0.0.1.
    const env = { MT_API_URL: stack.api.url, MT_API_KEY: stack.adminKey, MT_EGRESS_ALLOW: '127.0.0.1' };
    const dry = await runMt(['deploy', dir, '--dry-run', '--json'], { home: stack.home, env });
    await rm(dir, { recursive: true, force: true });
    expect(dry.code, dry.stderr).toBe(0);
    const plan = JSON.parse(dry.stdout) as {
      applied: boolean;
      changes: { kind: string; name: string; action: string; breaking: string[] }[];
    };
    expect(plan.applied).toBe(false);
    const connector = plan.changes.find((c) => c.kind === 'connector' && c.name === 'issue-search');
    expect(connector?.action).toBe('update');
    const tool = plan.changes.find((c) => c.kind === 'tool' && c.name === 'search-issues');
    expect(tool?.action).toBe('update');
    expect(tool?.breaking.join('\n')).toContain('state');
    await stack.api.deploy(repoFiles(mcp.url));
    const versions = await stack.api.request<unknown[]>('GET', '/v1/connectors/issue-search/versions');
    expect(versions.body).toHaveLength(2);
  });

  it('refuses a deploy naming a tool the server does not have, and changes nothing', async () => {
    const refused = await stack.api.request<{ code: string; error: string }>('POST', '/v1/deploy', {
      files: repoFiles(mcp.url, 'search_issue'),
    });
    expect(refused.status).toBe(422);
    expect(refused.body.code).toBe('api:deploy:mcp-tool-missing');
    expect(refused.body.error).toContain('did you mean search_issues?');
    const versions = await stack.api.request<unknown[]>('GET', '/v1/connectors/issue-search/versions');
    expect(versions.body).toHaveLength(2);
  });

  it('refuses a deploy whose MCP server cannot be listed', async () => {
    const gone = mcp.url.replace('/mcp', '/not-mcp');
    const refused = await stack.api.request<{ code: string; error: string }>('POST', '/v1/deploy', {
      files: repoFiles(gone),
    });
    expect(refused.status).toBe(502);
    expect(refused.body.code).toBe('api:deploy:mcp-unlisted');
    expect(refused.body.error).not.toContain(TRACKER_SECRET);
  });
});
