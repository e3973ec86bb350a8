import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readConfigRepo } from '@maitento/lang';
import { Maitento } from '@maitento/sdk';
import { type RunningServer, startServer } from '@maitento/server';
import { createTestDatabase, type TestDatabase } from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// issue #22, item 7: messages a newcomer meets, against a real server with the example repo deployed and the
// real `mt` (the compiled CLI, as a user runs it).
const root = fileURLToPath(new URL('../', import.meta.url));
const ADMIN_KEY = `mt_msg_${randomBytes(16).toString('hex')}`;
let db: TestDatabase;
let server: RunningServer;
let mt: Maitento;
// The scripted model's scripts of the approval tests below (a folder of this test's own).
const scripts = mkdtempSync(join(tmpdir(), 'mt-messages-scripts-'));

function cli(args: string[], cwd = root, key = ADMIN_KEY) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [`${root}packages/cli/bin/mt.js`, ...args],
      { cwd, env: { PATH: process.env.PATH ?? '', MT_API_URL: server.url, MT_API_KEY: key }, timeout: 30_000 },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
    );
  });
}

async function messageOf(call: Promise<unknown>): Promise<string> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(Error);
  return (error as Error).message;
}

beforeAll(async () => {
  // The in-process server's scripted model reads its folder from the environment at each run.
  process.env.MT_SCRIPTED_MODELS = scripts;
  db = await createTestDatabase('mt_messages', { migrated: true });
  server = await startServer({
    port: 0,
    databaseUrl: db.url,
    secretKey: randomBytes(32).toString('hex'),
    bootstrapKey: ADMIN_KEY,
    platformOrigin: 'http://127.0.0.1:8080',
    logger: false,
    message: () => {},
  });
  mt = new Maitento({ baseUrl: server.url, apiKey: ADMIN_KEY, maxRetries: 0 });
  await mt.secrets.create({ name: 'orders-api-key', value: 'v' });
  await mt.deploy.create({ files: await readConfigRepo(root) });
});

afterAll(async () => {
  delete process.env.MT_SCRIPTED_MODELS;
  await server?.close();
  await db?.drop();
  for (const dir of [...repos, scripts]) rmSync(dir, { recursive: true, force: true });
});

// A config repo of one tool whose connector calls `host`.
const repos: string[] = [];
function repoCalling(host: string): string {
  const repo = mkdtempSync(join(tmpdir(), 'mt-messages-'));
  repos.push(repo);
  mkdirSync(join(repo, 'connectors/open-api'), { recursive: true });
  mkdirSync(join(repo, 'external-operations/open-api'), { recursive: true });
  writeFileSync(
    join(repo, 'connectors/open-api/ping.mtr'),
    `method = "GET"\nurl = "http://${host}/ping"\ndescription = "Pings"\n`,
  );
  writeFileSync(join(repo, 'external-operations/open-api/ping.mtr'), 'connector = @ref("ping")\nguidance = "Pings."\n');
  return repo;
}

describe('a misspelt name gets a did-you-mean', () => {
  it('mt interaction-run wether: error [api:interactions:not-found] ... did you mean "weather"?', async () => {
    const res = await cli(['interaction-run', 'wether', '--input', 'place=Paris']);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(
      'error [api:interactions:not-found]: No interaction wether in this namespace; did you mean "weather"?',
    );
  });

  it('interactions, agents and tools read by a misspelt name', async () => {
    expect(await messageOf(mt.interactions.get('ask-handbok'))).toBe(
      'No interaction ask-handbok in this namespace; did you mean "ask-handbook"?',
    );
    expect(await messageOf(mt.agents.get('suport-agent'))).toBe(
      'No agent suport-agent in this namespace; did you mean "support-agent"?',
    );
    expect(await messageOf(mt.extops.get('get-ordre'))).toBe(
      'No tool get-ordre in this namespace; did you mean "get-order"?',
    );
  });

  it('says nothing more when no name is close, or when the name exists and only the version does not', async () => {
    expect(await messageOf(mt.interactions.get('zzzzzzzz'))).toBe('No interaction zzzzzzzz in this namespace');
    expect(await messageOf(mt.agents.get('support-agent', { version: 9 }))).toBe(
      'No agent support-agent version 9 in this namespace',
    );
  });
});

describe('hints that point at the fix', () => {
  it('a secret name where an id belongs points at mt secret-list', async () => {
    const res = await cli([
      'interaction-run',
      'support-any-shop',
      '--input',
      'message=hi',
      '--input',
      'shopKey=orders-api-key',
    ]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(
      "error [api:interactions:input-invalid]: requires valid GUID for secret ID shopKey - but value is: orders-api-key; pass the secret's id, not its name (`mt secret-list` shows them)",
    );
  });

  it('plain localhost is named as itself, not as "names ending in .localhost"', async () => {
    const res = await cli(['check', repoCalling('localhost:3000')]);
    expect(res.code).toBe(1);
    expect(res.stdout + res.stderr).toContain('hint: localhost is a special-use or internal name, never a public one.');
    expect(res.stdout + res.stderr).not.toContain('.localhost');
  });

  it('a name that does not resolve (mt extop-call) mentions MT_RESOLVE', async () => {
    // `.example` is reserved (RFC 2606): no public DNS answers it, on line or off.
    const res = await cli(['extop-call', 'ping', '--dry-run'], repoCalling('api.no-such-host.example'));
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(
      /^error \[api:egress:name-not-resolved\]: Maitento could not resolve api\.no-such-host\.example: /m,
    );
    expect(res.stderr).toContain('`MT_RESOLVE=HOST=IP mt extop-call ... --dry-run` gives the name a fixed address');
  });
});

describe('a yes-or-no property written yes', () => {
  it('the bare word and the quoted string both lead to true, never from one to the other', async () => {
    const repo = repoCalling('api.teapot-shop.com');
    const connector = join(repo, 'connectors/open-api/ping.mtr');
    const write = (value: string) =>
      writeFileSync(
        connector,
        `method = "GET"\nurl = "https://api.teapot-shop.com/ping"\ndescription = "Pings"\nparameters.query = [\n  {\n    name = "q"\n    required = ${value}\n  }\n]\n`,
      );
    write('yes');
    let res = await cli(['check', repo]);
    expect(res.code).toBe(1);
    expect(res.stdout + res.stderr).toContain(
      'error mtr:syntax:unexpected-token expected a value, found the bare word `yes`: a yes-or-no property takes true (without quotes); text is a string in double quotes, "yes"',
    );
    write('"yes"');
    res = await cli(['check', repo]);
    expect(res.code).toBe(1);
    expect(res.stdout + res.stderr).toContain(
      'error mtr:property:type parameters.query[0].required must be true or false, not the string "yes" (write true, without quotes)',
    );
    write('"off"');
    res = await cli(['check', repo]);
    expect(res.stdout + res.stderr).toContain('(write false, without quotes)');
    // A word that is no yes-or-no is asked for in quotes only.
    write('maybe');
    res = await cli(['check', repo]);
    expect(res.stdout + res.stderr).toContain('found the bare word `maybe`: write a string in double quotes, "maybe"');
    write('true');
    expect((await cli(['check', repo])).code).toBe(0);
    // Five starts of the CLI: seconds each on a loaded machine.
  }, 90_000);
});

describe('approvals: what the call would do, and "already answered" only for answered ones', () => {
  // A namespace of its own: a refund tool that needs approval, an agent the scripted model plays. The shop is a
  // public address (example.com's), so that no name is resolved; no test approves a call, so none is sent.
  let key: string;
  let ns: Maitento;
  beforeAll(async () => {
    const created = await mt.namespaces.create({ name: 'approvals-msg' });
    key = created.key.key;
    ns = new Maitento({ baseUrl: server.url, apiKey: key, maxRetries: 0 });
    await ns.secrets.create({ name: 'shop-key', value: 'sk_live_never_shown' });
    const reason = `A cracked lid: ${'a full refund, as the shop promises. '.repeat(4)}`;
    writeFileSync(
      join(scripts, 'refunder.json'),
      JSON.stringify([
        {
          toolCalls: [
            {
              name: 'refund-order',
              arguments: { request: { amount: 49.9, reason }, additionalInputs: { 'path.orderId': 'A-1001' } },
            },
          ],
        },
        { text: 'Refunded.' },
      ]),
    );
    await ns.deploy.create({
      files: [
        {
          path: 'connectors/open-api/refund.mtr',
          content:
            'method = "POST"\nurl = "https://93.184.215.14/orders/{orderId}/refunds"\ndescription = "Refunds an order"\nauth = "Header"\n' +
            'parameters.path = [ { name = "orderId" } ]\n' +
            'schema.request = { type = "object" properties = { amount = { type = "number" } reason = { type = "string" } } }\n',
        },
        {
          path: 'external-operations/open-api/refund-order.mtr',
          content:
            'connector = @ref("refund")\nguidance = "Refunds an order."\nrequiresApproval = true\nauth = { header = "X-Api-Key" secret = @ref("shop-key") }\n',
        },
        {
          path: 'agents/refunder.mtr',
          content:
            'model = "scripted:refunder"\ninstructions = "Refund."\nfunctions = [ { ref = @ref("refund-order") } ]\n',
        },
        {
          path: 'interactions/one-shot/refund.mtr',
          content: 'agent = { name = "R" agent = @ref("refunder") }\ntask = "Refund A-1001"\n',
        },
      ],
    });
  });

  async function waitingRun() {
    const run = await ns.interactionRuns.start('refund', {});
    for (let i = 0; i < 200; i++) {
      const now = await ns.interactionRuns.get(run.id);
      if (now.status === 'PendingApproval') return now;
      if (now.status !== 'Running')
        throw new Error(`run ended ${now.status}: ${JSON.stringify(await ns.interactionRuns.listEvents(run.id))}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('the run never waited for approval');
  }

  it('mt approval-list shows the method, the URL with its path filled in, and the body cut short; never the secret', async () => {
    const run = await waitingRun();
    const res = await cli(['approval-list'], root, key);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^ID\s+RUN\s+TOOL\s+AGENT\s+STATUS\s+CREATED\s+CALL$/m);
    const row = res.stdout.split('\n').find((l) => l.includes(run.id));
    expect(row).toContain(
      'POST https://93.184.215.14/orders/A-1001/refunds {"amount":49.9,"reason":"A cracked lid: a full refund, as t…',
    );
    expect(res.stdout).not.toContain('sk_live_never_shown');
    await ns.interactionRuns.cancel(run.id);
  });

  it('interaction-approve on a cancelled run: it waits on nothing, and its approval was never answered', async () => {
    const run = await waitingRun();
    const approvalId = run.pendingApproval?.id ?? '';
    await ns.interactionRuns.cancel(run.id);
    let res = await cli(['interaction-approve', run.id], root, key);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(
      `error [api:runs:not-waiting]: Run ${run.id} is not waiting for an approval (status Cancelled)`,
    );
    expect(res.stderr).not.toContain('already been answered');
    res = await cli(['interaction-approve', run.id, '--approval', approvalId], root, key);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(
      `error [api:approvals:closed]: Approval ${approvalId} was never answered, and no longer can be: its run ${run.id} ended first (Cancelled)`,
    );
    res = await cli(['approval-approve', approvalId], root, key);
    expect(res.stderr).toContain(`error [api:approvals:closed]: Approval ${approvalId} was never answered`);
    // A run, then three starts of the CLI.
  }, 90_000);

  it('an approval a person answered is the one that "has already been answered"', async () => {
    const run = await waitingRun();
    const approvalId = run.pendingApproval?.id ?? '';
    await ns.approvals.reject(approvalId, { reason: 'too much' });
    const res = await cli(['approval-approve', approvalId], root, key);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(
      `error [api:approvals:already-answered]: Approval ${approvalId} has already been answered (Rejected)`,
    );
    await ns.interactionRuns.cancel(run.id).catch(() => undefined);
  });
});
