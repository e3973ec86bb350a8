import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEgressPolicy } from '@maitento/egress';
import { createEngine, modelsFromEnvironment, type RunningEngine } from '@maitento/engine';
import { createGateway } from '@maitento/gateway';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auth, deployOk, startTestServer, type TestServer } from './helpers.js';

// A server without a worker (its engine starts on the first run request) and a worker elsewhere on the
// same database, as `mt serve` processes and `mt worker` processes share one PostgreSQL.
let server: TestServer;
let worker: RunningEngine;
const gateway = createGateway({ policy: createEgressPolicy({ allow: '127.0.0.1/32' }) });

beforeAll(async () => {
  server = await startTestServer();
  await deployOk(server, [
    { path: 'agents/greeter.mtr', content: 'model = "scripted:greeter"\ninstructions = "Greet."\n' },
    {
      path: 'interactions/one-shot/greet.mtr',
      content:
        'agent = { name = "Greeter" agent = @ref("greeter") }\ntask = "Greet %%who%%"\ninputs.prompts = [ { name = "who" required = true } ]\n',
    },
  ]);
  const scriptsDir = mkdtempSync(join(tmpdir(), 'mt-api-only-'));
  writeFileSync(join(scriptsDir, 'greeter.json'), JSON.stringify([{ text: 'Hello, Ada.' }]));
  worker = await createEngine({
    db: server.db,
    secretKey: randomBytes(32),
    gateway,
    worker: { concurrency: 1 },
    models: modelsFromEnvironment({ scriptsDir }),
  });
});

afterAll(async () => {
  await worker?.close();
  await gateway.close();
  await server?.close();
});

describe('a server without a worker', () => {
  it('queues a run that a worker elsewhere executes, and the server reads its outcome', async () => {
    const started = await server.app.inject({
      method: 'POST',
      url: '/v1/interactions/greet/runs',
      headers: auth(server.adminKey),
      payload: { inputs: { who: 'Ada' } },
    });
    expect(started.statusCode, started.body).toBe(201);
    const id = started.json().id as string;
    const deadline = Date.now() + 15_000;
    let run = started.json();
    while (run.status === 'Running' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      run = (await server.app.inject({ method: 'GET', url: `/v1/runs/${id}`, headers: auth(server.adminKey) })).json();
    }
    expect(run).toMatchObject({ status: 'Completed', result: 'Hello, Ada.' });
  });
});
