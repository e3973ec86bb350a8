import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRecordingUpstream, type Upstream } from '@maitento/testkit';
import { json } from './helpers/upstream.js';

// The real `mt` (built by `npx tsc -b`, as `npm test` does first) on copies of the top-level example repo.
const root = fileURLToPath(new URL('../../../', import.meta.url));
const mt = join(root, 'node_modules/.bin/mt');
let upstream: Upstream;
/** Plays Maitento's own API (MT_PUBLIC_URL) for the example's auth = "Maitento" tools. */
let platform: Upstream;
let platformUrl: string;
let localRepo: string;
let exampleRepo: string;

function copyExampleRepo(rewrite?: (text: string) => string): string {
  const dir = mkdtempSync(join(tmpdir(), 'mt-extop-call-'));
  for (const folder of ['connectors', 'external-operations', 'agents', 'interactions']) {
    cpSync(join(root, folder), join(dir, folder), { recursive: true });
  }
  if (rewrite) {
    const walk = (d: string): void => {
      for (const name of readdirSync(d)) {
        const path = join(d, name);
        if (statSync(path).isDirectory()) walk(path);
        else writeFileSync(path, rewrite(readFileSync(path, 'utf8')));
      }
    };
    walk(dir);
  }
  return dir;
}

function run(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      mt,
      args,
      {
        // MT_PUBLIC_URL: the example repo's handbook and file tools (auth = "Maitento") call the server's own URL,
        // mt serve's default address in the repo, the platform upstream's in the copies.
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '',
          MT_PUBLIC_URL: platformUrl,
          ...env,
        },
        timeout: 20_000,
      },
      (error, stdout, stderr) => {
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

beforeAll(async () => {
  platform = await startRecordingUpstream((_req, res) => json(res, 200, { results: [] }));
  platformUrl = `http://127.0.0.1:${platform.port}`;
  upstream = await startRecordingUpstream((req, res) => {
    const { body } = req;
    json(res, 200, { path: req.url, echoedKey: req.headers['x-api-key'] ?? null, body });
  });
  const local = `http://127.0.0.1:${upstream.port}`;
  localRepo = copyExampleRepo((text) =>
    text
      .replace(/https:\/\/(api\.open-meteo\.com|orders\.example\.com|handbook\.example\.com)/g, local)
      .replaceAll('http://127.0.0.1:8080', platformUrl),
  );
  exampleRepo = copyExampleRepo((text) => text.replaceAll('http://127.0.0.1:8080', platformUrl));
});

afterAll(async () => {
  await upstream.close();
  await platform.close();
  rmSync(localRepo, { recursive: true, force: true });
  rmSync(exampleRepo, { recursive: true, force: true });
});

const allow = { MT_EGRESS_ALLOW: '127.0.0.1/32' };
const weatherArgs = JSON.stringify({ additionalInputs: { 'query.latitude': 51.5072, 'query.longitude': -0.1276 } });

describe('mt extop-call', () => {
  it('calls current-weather against a local server and prints the result as JSON', async () => {
    const before = upstream.requests.length;
    const out = await run(
      ['extop-call', 'current-weather', '--args', weatherArgs, '--repo', localRepo, '--json'],
      allow,
    );
    expect(out.code, out.stderr).toBe(0);
    const result = JSON.parse(out.stdout);
    expect(result).toMatchObject({ ok: true, status: 200 });
    const [received] = upstream.requests.slice(before);
    expect(received.method).toBe('GET');
    expect(received.url).toBe(
      '/v1/forecast?latitude=51.5072&longitude=-0.1276&current=temperature_2m%2Cwind_speed_10m%2Cweather_code',
    );
  });

  it('sends a --secret in the tool header and never prints it', async () => {
    const out = await run(
      [
        'extop-call',
        'get-order',
        '--args',
        '{"additionalInputs":{"path.orderId":"A-1001"}}',
        '--secret',
        'orders-api-key=k-supersecret',
        '--repo',
        localRepo,
        '--json',
      ],
      allow,
    );
    expect(out.code, out.stderr).toBe(0);
    expect(upstream.requests.at(-1)?.headers['x-api-key']).toBe('k-supersecret');
    expect(JSON.parse(out.stdout).body).toMatchObject({ path: '/orders/A-1001', echoedKey: '[secret]' });
    expect(out.stdout + out.stderr).not.toContain('k-supersecret');
  });

  it('does not echo a --secret written without its NAME= (most likely the value itself)', async () => {
    const before = upstream.requests.length;
    const out = await run(['extop-call', 'get-order', '--secret', 'k-typed-alone', '--repo', localRepo], allow);
    expect(out.code).toBe(1);
    expect(out.stderr).toContain('--secret');
    expect(out.stdout + out.stderr).not.toContain('k-typed-alone');
    expect(upstream.requests.length).toBe(before);
  });

  it('without the secret says it could not be found, sends nothing and exits 1', async () => {
    const before = upstream.requests.length;
    const out = await run(
      ['extop-call', 'get-order', '--args', '{"additionalInputs":{"path.orderId":"A-1"}}', '--repo', localRepo],
      allow,
    );
    expect(out.code).toBe(1);
    expect(out.stderr).toContain(
      'error [api:gateway:secret-not-found]: Could not find secret orders-api-key for connector orders-get-order',
    );
    expect(upstream.requests.length).toBe(before);
  });

  it('fills a run-input binding from --input (the interaction that binds it is found) and an auth input picks the secret', async () => {
    const search = await run(
      [
        'extop-call',
        'search-handbook',
        '--args',
        '{"request":{"query":"holidays"}}',
        '--input',
        'partitionId=kb-7',
        '--repo',
        localRepo,
      ],
      // By hand, an auth = "Maitento" tool sends the caller's own key to the platform's URL.
      { ...allow, MT_API_KEY: 'mt_own_key' },
    );
    expect(search.code, search.stderr).toBe(0);
    expect(JSON.parse(platform.requests.at(-1)?.body ?? '')).toEqual({ query: 'holidays', partitionId: 'kb-7' });
    expect(platform.requests.at(-1)?.headers.authorization).toBe('Bearer mt_own_key');
    // Without a key to send, it says what to set, and nothing is sent.
    const before = platform.requests.length;
    const keyless = await run(
      [
        'extop-call',
        'search-handbook',
        '--args',
        '{"request":{"query":"x"}}',
        '--input',
        'partitionId=kb-7',
        '--repo',
        localRepo,
      ],
      allow,
    );
    expect(keyless.code).toBe(1);
    expect(keyless.stderr).toContain('MT_API_KEY');
    expect(platform.requests.length).toBe(before);
    const shop = await run(
      [
        'extop-call',
        'get-order',
        '--args',
        '{"additionalInputs":{"path.orderId":"B-2"}}',
        '--input',
        'shopKey=second-shop',
        '--secret',
        'second-shop=k-second',
        '--repo',
        localRepo,
      ],
      allow,
    );
    expect(shop.code, shop.stderr).toBe(0);
    expect(upstream.requests.at(-1)?.headers['x-api-key']).toBe('k-second');
  });

  it('refuses a body that does not match the schema before sending, exit 1', async () => {
    const before = upstream.requests.length;
    const out = await run(
      [
        'extop-call',
        'refund-order',
        '--args',
        '{"request":{"amount":"lots","reason":"x"},"additionalInputs":{"path.orderId":"A-1"}}',
        '--secret',
        'orders-api-key=k',
        '--repo',
        localRepo,
        '--approve',
        '--json',
      ],
      allow,
    );
    expect(out.code).toBe(1);
    expect(JSON.parse(out.stdout)).toMatchObject({ ok: false, code: 'api:gateway:request-invalid' });
    expect(upstream.requests.length).toBe(before);
  });

  it('refuses a tool that requires approval unless --approve is given, and then makes the call', async () => {
    const allow = { MT_EGRESS_ALLOW: '127.0.0.1' };
    const args = [
      'extop-call',
      'refund-order',
      '--args',
      '{"request":{"amount":12.5,"reason":"Blue mug arrived smashed"},"additionalInputs":{"path.orderId":"A-1001"}}',
      '--secret',
      'orders-api-key=k-approve',
      '--repo',
      localRepo,
      '--json',
    ];
    const before = upstream.requests.length;
    const refused = await run(args, allow);
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout)).toMatchObject({ ok: false, code: 'api:approvals:required' });
    expect(upstream.requests.length).toBe(before);

    // Without --json the refusal says what to do by hand: pass --approve.
    const told = await run(args.slice(0, -1), allow);
    expect(told.code).toBe(1);
    expect(told.stderr).toContain('error [api:approvals:required]');
    expect(told.stderr).toContain('pass --approve to approve this call yourself');
    expect(upstream.requests.length).toBe(before);

    const approved = await run([...args, '--approve'], allow);
    expect(approved.code, approved.stderr).toBe(0);
    expect(JSON.parse(approved.stdout)).toMatchObject({ ok: true, status: 200 });
    expect(upstream.requests.length).toBe(before + 1);
    expect(upstream.requests.at(-1)?.url).toBe('/orders/A-1001/refund');
  });

  it('--dry-run prints the exact request for the real open-meteo URL, resolving through MT_RESOLVE, sending nothing', async () => {
    const out = await run(
      ['extop-call', 'current-weather', '--args', weatherArgs, '--repo', exampleRepo, '--dry-run'],
      {
        MT_RESOLVE: 'api.open-meteo.com=93.184.215.14',
      },
    );
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toBe(
      [
        'GET https://api.open-meteo.com/v1/forecast?latitude=51.5072&longitude=-0.1276&current=temperature_2m%2Cwind_speed_10m%2Cweather_code',
        'user-agent: Maitento/0.1',
        'accept: application/json, */*;q=0.5',
        '',
      ].join('\n'),
    );
  });

  it('--dry-run --json masks the secret and shows the body', async () => {
    const out = await run(
      [
        'extop-call',
        'refund-order',
        '--args',
        '{"request":{"amount":12.5,"reason":"Blue mug arrived smashed"},"additionalInputs":{"path.orderId":"A-1001"}}',
        '--secret',
        'orders-api-key=k-dry',
        '--repo',
        exampleRepo,
        '--dry-run',
        '--json',
      ],
      { MT_RESOLVE: 'orders.example.com=93.184.215.14' },
    );
    expect(out.code, out.stderr).toBe(0);
    const { request } = JSON.parse(out.stdout);
    expect(request).toMatchObject({
      method: 'POST',
      url: 'https://orders.example.com/orders/A-1001/refund',
      headers: { 'x-api-key': '[secret]', 'content-type': 'application/json' },
      body: { amount: 12.5, reason: 'Blue mug arrived smashed' },
    });
    expect(out.stdout).not.toContain('k-dry');
  });

  it('refuses a name that resolves to a private address, in --dry-run too, exit 1', async () => {
    const out = await run(
      ['extop-call', 'current-weather', '--args', weatherArgs, '--repo', exampleRepo, '--dry-run', '--json'],
      { MT_RESOLVE: 'api.open-meteo.com=10.0.0.1' },
    );
    expect(out.code).toBe(1);
    expect(JSON.parse(out.stdout)).toMatchObject({ ok: false, code: 'api:connectors:address-blocked' });
  });

  it('with the default policy refuses a call that resolves to the local server, which sees nothing', async () => {
    const before = upstream.requests.length;
    const connections = upstream.connections;
    const out = await run(['extop-call', 'current-weather', '--args', weatherArgs, '--repo', exampleRepo, '--json'], {
      MT_RESOLVE: 'api.open-meteo.com=127.0.0.1',
    });
    expect(out.code).toBe(1);
    expect(JSON.parse(out.stdout)).toMatchObject({ ok: false, code: 'api:connectors:address-blocked' });
    expect(upstream.requests.length).toBe(before);
    expect(upstream.connections).toBe(connections);
  });

  it('names an unknown tool and bad --args as user errors', async () => {
    const unknown = await run(['extop-call', 'nope', '--repo', exampleRepo]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('api:cli:tool-not-found');
    const bad = await run(['extop-call', 'current-weather', '--args', '{oops', '--repo', exampleRepo]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('error [api:cli:call-options-invalid]: mt extop-call: --args is not JSON');
  });
});
