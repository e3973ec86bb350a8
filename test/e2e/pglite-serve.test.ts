import { mkdir, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServeProcess, startServe } from './helpers/processes.js';
import { requireBuiltCli, runMt, tempHome } from './support/harness.js';

// `mt serve` with no DATABASE_URL, as a user first runs it: PGlite in a --data folder, a generated
// secret key and first admin key, a deploy and a real call, then a restart that keeps all of it.
const SECRET_VALUE = 'pglite-orders-secret-5e1d';
const EGRESS = { MT_EGRESS_ALLOW: '127.0.0.1' };
let home: string;
let data: string;
let repo: string;
let upstream: Server;
const keysSeen: (string | undefined)[] = [];

async function writeRepo(dir: string, port: number): Promise<void> {
  const files: Record<string, string> = {
    'connectors/open-api/orders-get.mtr': `method = "GET"
url = "http://127.0.0.1:${port}/orders/{orderId}"
description = "One order by its id"
auth = "Header"
parameters.path = [ { name = "orderId" description = "The order id" } ]
`,
    'external-operations/open-api/get-order.mtr': `connector = @ref("orders-get")
guidance = "Looks up an order by its id."
auth = { header = "X-Api-Key" secret = @ref("orders-key") }
`,
    'agents/support-agent.mtr': `model = "openai:gpt-4o-mini"
instructions = "Help customers with their orders."
functions = [ { ref = @ref("get-order") } ]
`,
  };
  for (const [path, content] of Object.entries(files)) {
    await mkdir(join(dir, path, '..'), { recursive: true });
    await writeFile(join(dir, path), content);
  }
}

function adminKeyFrom(log: string): string {
  const match = /first admin key \(shown once, keep it\):\n\s+(mt_\S+)/.exec(log);
  if (!match) throw new Error(`no first admin key in:\n${log}`);
  return match[1];
}

async function callGetOrder(server: ServeProcess, key: string) {
  const res = await fetch(`${server.url}/v1/extops/get-order/call`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ arguments: { additionalInputs: { 'path.orderId': 'A-1001' } } }),
  });
  return { status: res.status, body: await res.json() };
}

beforeAll(async () => {
  requireBuiltCli();
  upstream = createServer((req, res) => {
    keysSeen.push(req.headers['x-api-key'] as string | undefined);
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ id: 'A-1001', status: 'shipped' }));
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  home = await tempHome();
  data = join(home, 'data');
  repo = join(home, 'repo');
  await writeRepo(repo, (upstream.address() as AddressInfo).port);
});

afterAll(async () => {
  await new Promise((resolve) => upstream?.close(resolve));
  if (home) await rm(home, { recursive: true, force: true });
});

describe('mt serve on PGlite', { timeout: 120_000 }, () => {
  it('deploys and calls on a fresh data folder, and after a restart keeps the data, the key and the secrets', async () => {
    // From an empty folder, initdb included, as a user starts it (other tests copy an empty database made once).
    const first = await startServe(home, EGRESS, ['--data', data]);
    let key: string;
    try {
      expect(first.log()).toContain('(data: PGlite in ');
      expect(first.log()).toMatch(/generated a secret key in \S+secret\.key \(mode 0600\)/);
      key = adminKeyFrom(first.log());
      const env = { MT_API_URL: first.url, MT_API_KEY: key, ...EGRESS };
      expect((await runMt(['secret-create', 'orders-key'], { home, env, input: SECRET_VALUE })).code).toBe(0);
      const deployed = await runMt(['deploy', repo, '--json'], { home, env });
      expect(deployed.code, deployed.stderr).toBe(0);
      expect(JSON.parse(deployed.stdout).changes.map((c: { action: string }) => c.action)).toEqual([
        'create',
        'create',
        'create',
      ]);
      const call = await callGetOrder(first, key);
      expect(call).toEqual({ status: 200, body: { ok: true, status: 200, body: { id: 'A-1001', status: 'shipped' } } });
      expect(keysSeen).toEqual([SECRET_VALUE]);

      // A second server on the same folder would corrupt it: it refuses, and the first keeps working.
      const second = await startServe(home, EGRESS, ['--data', data]).catch((e: Error) => e);
      // A regression that lets it start must not leave a server running after the test.
      if (!(second instanceof Error)) await second.stop();
      expect(second).toBeInstanceOf(Error);
      expect(String(second)).toContain('api:store:data-locked');
      expect((await callGetOrder(first, key)).status).toBe(200);
    } finally {
      await first.stop();
    }
    expect((await stat(join(data, 'secret.key'))).mode & 0o777).toBe(0o600);
    expect(first.log()).not.toContain(SECRET_VALUE);

    const again = await startServe(home, EGRESS, ['--data', data]);
    try {
      expect(again.log()).not.toMatch(/generated a secret key|first admin key/);
      const env = { MT_API_URL: again.url, MT_API_KEY: key, ...EGRESS };
      const list = await runMt(['connector-list', '--json'], { home, env });
      expect(JSON.parse(list.stdout)).toEqual([{ name: 'orders-get', latestVersion: 1, enabled: true }]);
      const redeploy = await runMt(['deploy', repo], { home, env });
      expect(redeploy.code).toBe(0);
      expect(redeploy.stderr).toContain('deployed: 0 created, 0 updated, 3 unchanged');
      // The secret stored before the restart still decrypts: the generated key was kept.
      expect((await callGetOrder(again, key)).body.ok).toBe(true);
      expect(keysSeen).toEqual([SECRET_VALUE, SECRET_VALUE, SECRET_VALUE]);
    } finally {
      await again.stop();
    }
    expect(again.log()).not.toContain(SECRET_VALUE);
  });
});
