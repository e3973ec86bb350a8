import { randomBytes, randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { Maitento, MaitentoError } from '@maitento/sdk';
import { describe, expect, it } from 'vitest';
import { runsRepoFiles } from './helpers/config-repo.js';
import { useRunsStack } from './helpers/stack.js';
import { runMt } from './support/harness.js';

// A key's limit on starting runs (docs/limits.md, "A key's limit on starting runs"): an interaction's
// `limit = { perKey perEndUser }` counts the starts of `POST /v1/interactions/{name}/runs` in the database, so it holds
// across two real `mt serve` processes on one database; over it a start answers 429 with the fields and stores nothing.
const stack = useRunsStack({ servers: 2 }, { timeoutMs: 120_000 });

/** Deploys the runs repo with open-ticket's `limit` (an .mtr object). */
async function deployStartLimit(limit: string): Promise<void> {
  const files = runsRepoFiles({ origin: stack.upstream.origin }).map((f) =>
    f.path === 'interactions/one-shot/open-ticket.mtr' ? { ...f, content: `${f.content}limit = ${limit}\n` } : f,
  );
  await stack.api.deploy(files);
}

async function newKey(name: string): Promise<string> {
  const made = await stack.api.request('POST', '/v1/keys', { name, role: 'user' });
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  return made.body.key;
}

/** Starts an open-ticket run on server `server` with `key` (and `endUser`): the raw answer, headers included. */
function start(server: number, key: string, endUser?: string): Promise<Response> {
  return fetch(`${stack.servers[server % stack.servers.length]!.url}/v1/interactions/open-ticket/runs`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ inputs: { message: 'Broken lamp' }, ...(endUser === undefined ? {} : { endUser }) }),
  });
}

/** The open-ticket runs stored so far. */
async function storedRuns(): Promise<number> {
  const page = await stack.api.request('GET', '/v1/runs?interaction=open-ticket&limit=200');
  expect(page.status).toBe(200);
  const body = page.body as Record<string, unknown> | unknown[];
  const items = Array.isArray(body) ? body : Object.values(body).find(Array.isArray);
  return (items as unknown[]).length;
}

/** Fires `count` starts at once, alternating between the two servers; the answers. */
async function burst(count: number, key: string, endUser?: string): Promise<Response[]> {
  return Promise.all(Array.from({ length: count }, (_, i) => start(i, key, endUser)));
}

async function expectRefusal(over: Response, policy: string, quota: number, who: string): Promise<void> {
  expect(over.status).toBe(429);
  const retryAfter = Number(over.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThan(3000);
  expect(retryAfter).toBeLessThanOrEqual(3600);
  expect(over.headers.get('ratelimit-policy')).toBe(`"${policy}";q=${quota};w=3600`);
  expect(over.headers.get('ratelimit')).toBe(`"${policy}";r=0;t=${retryAfter}`);
  const body = (await over.json()) as { code: string; error: string };
  expect(body.code).toBe('api:limits:exceeded');
  expect(body.error).toContain(`open-ticket was not started: its limit of ${quota} starts per 1h for ${who}`);
}

describe("a key's limit on starting runs, across two servers", { timeout: 120_000 }, () => {
  it('one key: 3 of 8 simultaneous starts on two servers are admitted, the rest 429 with the fields and nothing stored; another key is counted apart', async () => {
    await deployStartLimit('{ perKey = { calls = 3 per = "1h" } }');
    const [a, b] = [await newKey('starts-a'), await newKey('starts-b')];
    const before = await storedRuns();
    const answers = await burst(8, a);
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 201, 201, 429, 429, 429, 429, 429]);
    for (const over of answers.filter((r) => r.status === 429)) {
      await expectRefusal(over, 'interaction-open-ticket-key', 3, 'key');
    }
    // Only the admitted starts stored a run.
    expect(await storedRuns()).toBe(before + 3);
    // Another key has its own count: 3 admitted on either server, then refused.
    const other = await burst(4, b);
    expect(other.map((r) => r.status).sort()).toEqual([201, 201, 201, 429]);
    expect(await storedRuns()).toBe(before + 6);
  });

  it('an end user is counted apart (perEndUser), on top of the key', async () => {
    await deployStartLimit('{ perKey = { calls = 20 per = "1h" } perEndUser = { calls = 2 per = "1h" } }');
    const key = await newKey('starts-end-users');
    const alice = await burst(5, key, 'alice');
    expect(alice.map((r) => r.status).sort()).toEqual([201, 201, 429, 429, 429]);
    for (const over of alice.filter((r) => r.status === 429)) {
      await expectRefusal(over, 'interaction-open-ticket-end-user', 2, 'end user alice');
    }
    // Another end user of the same key, and a start naming none, are admitted.
    const bob = await burst(2, key, 'bob');
    expect(bob.map((r) => r.status)).toEqual([201, 201]);
    expect((await start(0, key)).status).toBe(201);
  });

  it('mt interaction-run and the SDK (through REST) are counted against its key on either server, and says why it was refused', async () => {
    await deployStartLimit('{ perKey = { calls = 1 per = "1h" } }');
    const key = await newKey('starts-cli');
    const run = (server: number) =>
      runMt(['interaction-run', 'open-ticket', '--input', 'message=Broken lamp'], {
        home: stack.home,
        env: { MT_API_URL: stack.servers[server]!.url, MT_API_KEY: key },
      });
    const first = await run(0);
    expect(first.code, first.stderr).toBe(0);
    const over = await run(1);
    expect(over.code).toBe(1);
    expect(over.stdout + over.stderr).toContain('api:limits:exceeded');
    expect(over.stdout + over.stderr).toContain('open-ticket was not started: its limit of 1 starts per 1h for key');
    // The TypeScript SDK, through REST on the other server: the same count; it retries (a refused start counts
    // nothing) and then throws the 429 with its code.
    const sdk = new Maitento({ baseUrl: stack.servers[1]!.url, apiKey: key, maxRetries: 1 });
    const thrown = await sdk.interactionRuns
      .start('open-ticket', { inputs: { message: 'Broken lamp' } })
      .catch((e) => e);
    expect(thrown).toBeInstanceOf(MaitentoError);
    expect([thrown.status, thrown.code]).toEqual([429, 'api:limits:exceeded']);
  });

  it("a trigger's runs are no key's: a webhook starts runs while the key's starts are refused", async () => {
    const secret = `whsec_${randomBytes(24).toString('base64')}`;
    const made = await stack.api.request('POST', '/v1/secrets', { name: 'tickets-hook', value: secret });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const trigger = {
      path: 'triggers/tickets.mtr',
      content:
        'interaction = @ref("open-ticket")\ninputs = {\n  message = { pointer = "/message" }\n}\nverify = { style = "standard-webhooks" secret = @ref("tickets-hook") }\n',
    };
    const files = runsRepoFiles({ origin: stack.upstream.origin }).map((f) =>
      f.path === 'interactions/one-shot/open-ticket.mtr'
        ? { ...f, content: `${f.content}limit = { perKey = { calls = 1 per = "1h" } }\n` }
        : f,
    );
    await stack.api.deploy([...files, trigger]);
    const key = await newKey('starts-beside-a-trigger');
    expect((await start(0, key)).status).toBe(201);
    expect((await start(1, key)).status).toBe(429);
    for (let i = 0; i < 3; i++) {
      const body = JSON.stringify({ message: `Broken lamp ${i}` });
      const id = `msg_${randomUUID()}`;
      const at = new Date();
      const delivered = await fetch(`${stack.servers[i % 2]!.url}/v1/hooks/default/tickets`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'webhook-id': id,
          'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
          'webhook-signature': new Webhook(secret).sign(id, at, body),
        },
        body,
      });
      expect(delivered.status, await delivered.text()).toBe(202);
    }
  });

  it('a version of the interaction without a limit admits every start again', async () => {
    await deployStartLimit('{ perKey = { calls = 1 per = "1h" } }');
    const key = await newKey('starts-unlimited');
    expect((await start(0, key)).status).toBe(201);
    expect((await start(1, key)).status).toBe(429);
    await stack.api.deploy(runsRepoFiles({ origin: stack.upstream.origin }));
    expect((await burst(3, key)).map((r) => r.status)).toEqual([201, 201, 201]);
  });
});
