// MT_TRUST_PROXY (#41 item 10): the console's sign-in limit is per client address. Behind a reverse proxy every
// request comes from the proxy's address, so without the setting one person's tries lock everyone out; with it, the
// client named in X-Forwarded-For by the trusted proxy is limited on its own. Without it the header is ignored, so a
// client cannot forge its way past the limit. Real servers listening on 127.0.0.1, reached over HTTP.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LOGIN_TRIES_PER_MINUTE } from '../src/console/routes.js';
import { trustProxyFromEnv } from '../src/server/settings.js';
import { startTestServer, type TestServer } from './helpers.js';

const saved = process.env.MT_TRUST_PROXY;
function restore() {
  if (saved === undefined) delete process.env.MT_TRUST_PROXY;
  else process.env.MT_TRUST_PROXY = saved;
}

let trusting: { server: TestServer; url: string };
let plain: { server: TestServer; url: string };

async function listening(trust: string | undefined): Promise<{ server: TestServer; url: string }> {
  // The setting is read from the environment when the server is made, as `mt serve` reads it.
  if (trust === undefined) delete process.env.MT_TRUST_PROXY;
  else process.env.MT_TRUST_PROXY = trust;
  try {
    const server = await startTestServer();
    const url = await server.app.listen({ port: 0, host: '127.0.0.1' });
    return { server, url };
  } finally {
    restore();
  }
}

beforeAll(async () => {
  // One after the other: each reads the environment it was given.
  trusting = await listening('127.0.0.1');
  plain = await listening(undefined);
}, 60_000);

afterAll(async () => {
  await Promise.all([trusting?.server.close(), plain?.server.close()]);
});

afterEach(restore);

/** One sign-in try (a wrong key) as the proxy forwards it for `client`; resolves with the status. */
async function signIn(url: string, client: string): Promise<number> {
  const res = await fetch(`${url}/console/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { origin: url, 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': client },
    body: 'key=mt_wrong&_csrf=none',
  });
  await res.body?.cancel();
  return res.status;
}

async function exhaust(url: string, client: string): Promise<void> {
  for (let i = 0; i < LOGIN_TRIES_PER_MINUTE; i++) expect(await signIn(url, client)).not.toBe(429);
  expect(await signIn(url, client)).toBe(429);
}

describe('the sign-in limit behind a reverse proxy', () => {
  it('with MT_TRUST_PROXY naming the proxy, two clients behind it are limited separately', async () => {
    await exhaust(trusting.url, '203.0.113.10');
    expect(await signIn(trusting.url, '203.0.113.11')).not.toBe(429);
    expect(await signIn(trusting.url, '203.0.113.10')).toBe(429);
  });

  it('without it, X-Forwarded-For is ignored: a client cannot name itself anew to try again', async () => {
    await exhaust(plain.url, '203.0.113.20');
    expect(await signIn(plain.url, '203.0.113.21')).toBe(429);
  });
});

describe('MT_TRUST_PROXY', () => {
  it('is none when unset, empty or false; true; or a list of addresses, CIDR ranges and range names', () => {
    for (const off of [undefined, '', 'false']) {
      if (off === undefined) delete process.env.MT_TRUST_PROXY;
      else process.env.MT_TRUST_PROXY = off;
      expect(trustProxyFromEnv()).toBe(false);
    }
    process.env.MT_TRUST_PROXY = 'true';
    expect(trustProxyFromEnv()).toBe(true);
    process.env.MT_TRUST_PROXY = ' 10.0.0.0/8, 127.0.0.1 ,::1,fd00::/8,loopback,192.168.0.0/255.255.0.0';
    expect(trustProxyFromEnv()).toEqual([
      '10.0.0.0/8',
      '127.0.0.1',
      '::1',
      'fd00::/8',
      'loopback',
      '192.168.0.0/255.255.0.0',
    ]);
  });

  it('refuses a hop count and what is no address with api:server:trust-proxy-invalid', () => {
    for (const bad of ['1', 'yes', '10.0.0.0/33', '10.0.0.1,', 'proxy.internal', '::1/129']) {
      process.env.MT_TRUST_PROXY = bad;
      expect(() => trustProxyFromEnv(), bad).toThrow(
        expect.objectContaining({ code: 'api:server:trust-proxy-invalid' }),
      );
    }
  });
});
