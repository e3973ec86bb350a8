import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRecordingUpstream, type Upstream } from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunView } from './helpers/api.js';
import { type RunsStack, startRunsStack } from './helpers/stack.js';
import { ROOT, runMt } from './support/harness.js';

// The Redocly Museum imported by the real `mt import openapi` with --server-url at a local upstream, deployed by
// the real `mt deploy`, and called from a run: the scripted model calls museum-create-special-event, a person
// approves (an imported write starts supervised), and the upstream sees the path, the body and the secret header.
const SECRET = 'Basic bXVzZXVtOnMzY3JldC1lMmUtN2Y0YQ==';
const EVENT = {
  name: 'Pirate Coding Workshop',
  location: 'Computer Room',
  eventDescription: 'Captain Blackbeard shares his love of the C...language.',
  dates: ['2026-12-24'],
  price: 25,
};

let stack: RunsStack;
let upstream: Upstream;
let scripts: string;
let repo: string;

beforeAll(async () => {
  scripts = await mkdtemp(join(tmpdir(), 'mt-e2e-import-scripts-'));
  repo = await mkdtemp(join(tmpdir(), 'mt-e2e-import-repo-'));
  await writeFile(
    join(scripts, 'museum.json'),
    JSON.stringify([
      {
        toolCalls: [{ name: 'museum-create-special-event', arguments: { request: { ...EVENT, eventId: null } } }],
      },
      { text: 'The workshop is on the calendar.' },
    ]),
  );
  upstream = await startRecordingUpstream((request, res) => {
    res.statusCode = request.method === 'POST' ? 201 : 200;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ eventId: 'dad4bce8-f5cb-4078-a211-995864315e39', ...JSON.parse(request.body || '{}') }));
  });
  stack = await startRunsStack({ deploy: false, env: { MT_SCRIPTED_MODELS: scripts } });
  const secret = await stack.api.request('POST', '/v1/secrets', {
    name: 'museum-museum-placeholder-auth',
    value: SECRET,
  });
  expect(secret.status, JSON.stringify(secret.body)).toBe(201);
}, 120_000);

afterAll(async () => {
  await stack?.close();
  await upstream?.close();
  for (const dir of [scripts, repo]) if (dir) await rm(dir, { recursive: true, force: true });
});

describe('an imported OpenAPI operation called from a run', { timeout: 120_000 }, () => {
  it('imports, deploys, and the scripted model calls create-special-event through the gateway', async () => {
    const imported = await runMt(
      [
        'import',
        'openapi',
        join(ROOT, 'test/fixtures/openapi/museum/openapi.yaml'),
        '--out',
        repo,
        '--name',
        'museum',
        '--server-url',
        `${upstream.origin}/museum-api`,
      ],
      { home: stack.home },
    );
    expect(imported.code, imported.stderr).toBe(0);
    await mkdir(join(repo, 'agents'), { recursive: true });
    await mkdir(join(repo, 'interactions/one-shot'), { recursive: true });
    await writeFile(
      join(repo, 'agents/museum-agent.mtr'),
      'model = "scripted:museum"\ninstructions = "You plan the museum\'s events."\nfunctions = [ { ref = @ref("museum-create-special-event") } ]\n',
    );
    await writeFile(
      join(repo, 'interactions/one-shot/plan-event.mtr'),
      'agent = { name = "Planner" agent = @ref("museum-agent") }\ntask = "Plan this: %%request%%"\ninputs.prompts = [ { name = "request" required = true } ]\n',
    );
    const env = { MT_API_URL: stack.api.url, MT_API_KEY: stack.adminKey, MT_EGRESS_ALLOW: '127.0.0.1' };
    const deployed = await runMt(['deploy', repo], { home: stack.home, env });
    expect(deployed.code, deployed.stderr + deployed.stdout).toBe(0);

    const started = await stack.api.startRun('plan-event', { request: 'A pirate coding workshop on Christmas Eve' });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const waiting: RunView = await stack.api.waitForRun(started.body.id, (r) => r.status !== 'Running');
    expect(waiting.status, JSON.stringify(waiting)).toBe('PendingApproval');
    expect(upstream.requests).toHaveLength(0);
    expect(JSON.parse(waiting.pendingApproval!.argumentsJson).request).toMatchObject(EVENT);
    const approved = await stack.api.request('POST', `/v1/approvals/${waiting.pendingApproval!.id}/approve`, {});
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    const done = await stack.api.waitForEnd(started.body.id);
    expect(done.status, JSON.stringify(done)).toBe('Completed');

    expect(upstream.requests).toHaveLength(1);
    const call = upstream.requests[0]!;
    expect(call.method).toBe('POST');
    expect(call.url).toBe('/museum-api/special-events');
    // The model's null for the optional eventId means "not given": left out of the body.
    expect(JSON.parse(call.body)).toEqual(EVENT);
    // A value with a space goes into Authorization as it is: the Basic credential of the Museum's http basic.
    expect(call.headers.authorization).toBe(SECRET);
    const events = await stack.api.events(started.body.id);
    const result = events.find((e) => e.type === 'tool-result');
    expect(result?.data).toMatchObject({ ok: true, name: 'museum-create-special-event' });
    // No message the model got, no event and no view of the run holds the secret.
    expect(JSON.stringify(events)).not.toContain(SECRET);
    expect(JSON.stringify(done)).not.toContain(SECRET);
    expect(JSON.stringify(waiting)).not.toContain(SECRET);
  });
});
