import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createPgDb, type Db, readConnectionTokens } from '@maitento/store';
import type { FakeModelRequest } from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AuthorizationServer,
  authorize,
  freePort,
  startAuthorizationServer,
  localAsProvider,
  calendarMcpConnector,
} from './helpers/authorization-server.js';
import { type ProtectedMcpServer, startProtectedMcpServer } from './helpers/protected-mcp-server.js';
import { type RunsStack, startRunsStack } from './helpers/stack.js';
import { runMt } from './support/harness.js';

// The input schema of an OAuth2 MCP connector's tool, read at deploy with the connection of the end user the deployer
// names (`mt deploy --end-user`, the deploy body's `endUser`; decision 0390). Real parts: oidc-provider, the protected
// MCP server of mcp-oauth2.test.ts with a tool whose schema requires `day`, `mt serve`, and the fake OpenAI server,
// which records the tools each turn was given.

const REMOTE_SCHEMA = {
  type: 'object',
  properties: { day: { type: 'string', description: 'A weekday in lower case, e.g. monday' } },
  required: ['day'],
  additionalProperties: false,
};

let stack: RunsStack;
let as: AuthorizationServer;
let db: Db;
let callbackUrl: string;
let mcp: ProtectedMcpServer;
let repo: string;
const deployAnswers: string[] = [];

function files() {
  return [
    localAsProvider(as, { resource: mcp.url }),
    calendarMcpConnector(mcp.url, 'local-as'),
    {
      path: 'external-operations/open-api/meeting.mtr',
      content: 'connector = @ref("calendar")\nguidance = "The next meeting of the person."\n',
    },
    {
      path: 'agents/meeting-agent.mtr',
      content:
        'model = "openai:gpt-4o-mini"\ninstructions = "Act for the signed-in person."\nfunctions = [ { ref = @ref("meeting") } ]\n',
    },
    {
      path: 'interactions/one-shot/meeting.mtr',
      content: 'agent = { name = "Helper" agent = @ref("meeting-agent") }\ntask = "Find the meeting [schema-run]."\n',
    },
  ];
}

/** A machine-to-machine connector to the same server: the client's own token (client credentials grant). */
function machineFiles() {
  return [
    {
      path: 'auth-providers/machine-as.mtr',
      content: `resource = "${mcp.url}"
clientId = "${as.clientId}"
clientSecret = @ref("local-as-client-secret")
scopes = ["calendar.read"]
`,
    },
    {
      path: 'connectors/mcp/machine-calendar.mtr',
      content: `url = "${mcp.url}"
tool = "next_meeting"
description = "The team calendar's next meeting."
auth = "OAuth2"
provider = @ref("machine-as")
grant = "client_credentials"
`,
    },
    {
      path: 'external-operations/open-api/machine-meeting.mtr',
      content: 'connector = @ref("machine-calendar")\nguidance = "The team\'s next meeting."\n',
    },
  ];
}

async function deploy(endUser?: string, more: Array<{ path: string; content: string }> = []) {
  const answer = await stack.api.request('POST', '/v1/deploy', {
    files: [...files(), ...more],
    ...(endUser === undefined ? {} : { endUser }),
  });
  deployAnswers.push(JSON.stringify(answer.body));
  return answer;
}

async function connectorSchema() {
  const connector = await stack.api.request('GET', '/v1/connectors/calendar');
  expect(connector.status).toBe(200);
  return connector.body as { version: number; resource: { schema: { request: unknown } } };
}

beforeAll(async () => {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  callbackUrl = `${origin}/v1/connections/callback`;
  as = await startAuthorizationServer({ redirectUri: callbackUrl });
  mcp = await startProtectedMcpServer(as, REMOTE_SCHEMA);
  stack = await startRunsStack({
    deploy: false,
    env: { MT_PUBLIC_URL: origin, MT_LOG_LEVEL: 'debug' },
    serveArgs: ['--port', String(port)],
  });
  db = createPgDb(stack.env.DATABASE_URL);
  const secret = await stack.api.request('POST', '/v1/secrets', {
    name: 'local-as-client-secret',
    value: as.clientSecret,
  });
  expect(secret.status).toBe(201);
  repo = await mkdtemp(join(tmpdir(), 'mt-e2e-mcp-oauth2-schema-'));
  for (const file of files()) {
    await mkdir(join(repo, dirname(file.path)), { recursive: true });
    await writeFile(join(repo, file.path), file.content);
  }
}, 120_000);

afterAll(async () => {
  await db?.close();
  await stack?.close();
  await as?.close();
  await mcp?.close();
  if (repo) await rm(repo, { recursive: true, force: true });
});

describe("an OAuth2 MCP connector's input schema, read at deploy for a named end user", () => {
  it('a deploy that names no one does not reach the server: the tool takes any object, with a warning', async () => {
    const answer = await deploy();
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.warnings).toEqual([
      expect.objectContaining({ code: 'api:deploy:mcp-schema-unread', file: 'connectors/mcp/calendar.mtr' }),
    ]);
    expect((await connectorSchema()).resource.schema.request).toEqual({ type: 'object' });
    expect(mcp.received).toEqual([]);
  });

  it('naming a person with no connection refuses the deploy with 409 and sends nothing', async () => {
    const before = await connectorSchema();
    const answer = await deploy('olga');
    expect(answer.status).toBe(409);
    expect(answer.body).toMatchObject({ code: 'api:deploy:mcp-not-connected' });
    expect(answer.body.error).toContain('olga');
    expect(answer.body.error).toContain('not connected');
    expect((await connectorSchema()).version).toBe(before.version);
    expect(mcp.received).toEqual([]);
  });

  it("mt deploy --end-user of a connected person lists the server with their token and stores the tool's real schema", async () => {
    const link = await stack.api.request('POST', '/v1/connections/links', {
      provider: 'local-as',
      endUser: 'olga',
      scopes: ['calendar.read'],
    });
    expect(link.status, JSON.stringify(link.body)).toBe(201);
    const back = await authorize(link.body.url, 'olga-sub', callbackUrl);
    const done = await fetch(back, { redirect: 'manual', signal: AbortSignal.timeout(15_000) });
    expect(done.status, await done.text()).toBe(200);

    const env = { MT_API_URL: stack.api.url, MT_API_KEY: stack.adminKey, MT_EGRESS_ALLOW: '127.0.0.1' };
    const deployed = await runMt(['deploy', repo, '--end-user', 'olga', '--json'], { home: stack.home, env });
    expect(deployed.code, deployed.stderr + deployed.stdout).toBe(0);
    deployAnswers.push(deployed.stdout, deployed.stderr);
    const plan = JSON.parse(deployed.stdout);
    expect(plan.warnings ?? []).toEqual([]);
    expect(plan.changes).toContainEqual(
      expect.objectContaining({ kind: 'connector', name: 'calendar', action: 'update' }),
    );
    expect((await connectorSchema()).resource.schema.request).toEqual(REMOTE_SCHEMA);
    // The listing went to the server with Olga's token (initialize, tools/list).
    expect(mcp.received.map((r) => r.method)).toContain('tools/list');
    expect(mcp.received.every((r) => r.subject === 'olga-sub')).toBe(true);
  });

  it('a later deploy that names no one keeps the schema read (no new version, no warning)', async () => {
    const before = await connectorSchema();
    const from = mcp.received.length;
    const answer = await deploy();
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.warnings ?? []).toEqual([]);
    expect(answer.body.changes).toContainEqual(
      expect.objectContaining({ kind: 'connector', name: 'calendar', action: 'unchanged' }),
    );
    expect((await connectorSchema()).version).toBe(before.version);
    expect(mcp.received.length).toBe(from);
  });

  it("the model is given the remote tool's schema, and the gateway refuses arguments that do not match it", async () => {
    const turns: FakeModelRequest[] = [];
    stack.openai.server.setScript([
      (r) => {
        turns.push(r);
        return { toolCalls: [{ name: 'meeting', arguments: { request: { day: 5 } } }] };
      },
      (r) => {
        turns.push(r);
        return { toolCalls: [{ name: 'meeting', arguments: { request: { weekday: 'monday' } } }] };
      },
      (r) => {
        turns.push(r);
        return { toolCalls: [{ name: 'meeting', arguments: { request: { day: 'monday' } } }] };
      },
      (r) => {
        turns.push(r);
        return { text: 'Found it.' };
      },
    ]);
    const from = mcp.received.length;
    const started = await stack.api.startRun('meeting', {}, { endUser: 'olga' });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const ended = await stack.api.waitForEnd(started.body.id);
    expect(ended.status, JSON.stringify(ended)).toBe('Completed');
    expect(turns.length).toBe(4);
    const tool = turns[0].conversation.tools.find((t) => t.name === 'meeting');
    const given = JSON.stringify(tool?.inputSchema);
    expect(given).toContain('"required":["day"]');
    expect(given).toContain('A weekday in lower case, e.g. monday');
    const results = (await stack.api.events(started.body.id))
      .filter((e) => e.type === 'tool-result')
      .map((e) => e.data as { ok: boolean; code?: string; body?: string });
    expect(results.map((r) => r.ok)).toEqual([false, false, true]);
    // `day` must be a string; `weekday` is not an argument of the remote tool.
    expect(results[0].code).toBe('api:gateway:request-invalid');
    expect(['api:gateway:argument-unknown', 'api:gateway:request-invalid']).toContain(results[1].code);
    expect(JSON.stringify(results[2])).toContain('olga-sub');
    // Only the valid call reached the server.
    const calls = mcp.received.slice(from).filter((r) => r.method === 'tools/call');
    expect(calls.length).toBe(1);
  }, 60_000);

  it("a client credentials connector's server is listed with the client's own token once its provider is deployed", async () => {
    const from = mcp.received.length;
    // The provider is new in this deploy: no client token yet, so the tool takes any object, with the warning.
    const first = await deploy(undefined, machineFiles());
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.warnings).toEqual([
      expect.objectContaining({ code: 'api:deploy:mcp-schema-unread', file: 'connectors/mcp/machine-calendar.mtr' }),
    ]);
    expect(mcp.received.length).toBe(from);
    const second = await deploy(undefined, machineFiles());
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    expect(second.body.warnings ?? []).toEqual([]);
    const machine = await stack.api.request('GET', '/v1/connectors/machine-calendar');
    expect(machine.body.resource.schema.request).toEqual(REMOTE_SCHEMA);
    const listed = mcp.received.slice(from);
    expect(listed.map((r) => r.method)).toContain('tools/list');
    expect(listed.every((r) => r.subject === `client:${as.clientId}`)).toBe(true);
    // The person's connector was not listed again (no one named): its schema was kept.
    expect((await connectorSchema()).resource.schema.request).toEqual(REMOTE_SCHEMA);
  }, 60_000);

  it('no token is stored with the connector or shown in the deploy answers, the events or the log', async () => {
    const { rows } = await db.query<{ id: string }>('SELECT id FROM mt_connections');
    const secrets: string[] = [];
    for (const { id } of rows) {
      const tokens = await readConnectionTokens(db, Buffer.from(stack.env.MT_SECRET_KEY, 'hex'), 'default', id);
      secrets.push(tokens?.accessToken ?? '', tokens?.refreshToken ?? '');
    }
    for (const r of mcp.received) {
      const bearer = /^Bearer (.+)$/.exec(r.authorization)?.[1];
      if (bearer) secrets.push(bearer);
    }
    expect(secrets.filter((s) => s.length >= 20).length).toBeGreaterThanOrEqual(2);
    const { rows: versions } = await db.query<{ resource: unknown; pins: unknown }>(
      'SELECT resource, pins FROM mt_resource_versions',
    );
    const { rows: runs } = await db.query<{ id: string }>('SELECT id FROM mt_runs');
    const seen = [...stack.servers.map((s) => s.log()), ...deployAnswers, JSON.stringify(versions)];
    for (const { id } of runs) seen.push(JSON.stringify(await stack.api.events(id)));
    const text = seen.join('\n');
    for (const value of secrets.filter((s) => s !== '')) {
      expect(text.includes(value), `a token appears: ${value.slice(0, 6)}…`).toBe(false);
    }
  }, 60_000);
});
