import { once } from 'node:events';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { isMtError } from '@maitento/errors';
import { createEgressAgent, createEgressPolicy, type Resolver } from '@maitento/egress';
import { selfSignedCertificate } from '@maitento/testkit';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// A self-signed certificate for api.example.test, made fresh for this test with openssl.
let cert: string;
let server: Server;
let port: number;
let connections = 0;
let servernames: (string | false)[] = [];
let alpn: (string | false)[] = [];

beforeAll(async () => {
  const made = selfSignedCertificate(['api.example.test']);
  cert = made.cert;
  // The upstream offers HTTP/2 first, as many public APIs do; the egress agent must still speak HTTP/1.1.
  server = createServer({ cert, key: made.key, ALPNProtocols: ['h2', 'http/1.1'] }, (_req, res) =>
    res.end('tls reached'),
  );
  server.on('connection', () => {
    connections += 1;
  });
  server.on('secureConnection', (socket) => {
    servernames.push(socket.servername);
    alpn.push(socket.alpnProtocol);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as AddressInfo).port;
});
afterAll(() => server?.close());

const resolver: Resolver = async (hostname) => {
  if (hostname === 'api.example.test' || hostname === 'other.example.test')
    return [{ address: '127.0.0.1', family: 4 }];
  throw Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' });
};

describe('createEgressAgent over https', () => {
  it('connects to the checked address while verifying the certificate against the name', async () => {
    connections = 0;
    servernames = [];
    const agent = createEgressAgent({
      policy: createEgressPolicy({ allow: '127.0.0.1/32' }),
      resolver,
      connect: { ca: cert },
    });
    try {
      const res = await request(`https://api.example.test:${port}/`, { dispatcher: agent });
      expect(await res.body.text()).toBe('tls reached');
      expect(servernames).toEqual(['api.example.test']);
      // A name the certificate does not cover fails verification even though its address is allowed.
      await expect(request(`https://other.example.test:${port}/`, { dispatcher: agent })).rejects.toMatchObject({
        code: 'ERR_TLS_CERT_ALTNAME_INVALID',
      });
    } finally {
      await agent.close();
    }
  });

  it('speaks HTTP/1.1 to an upstream that offers HTTP/2 by ALPN', async () => {
    alpn = [];
    const agent = createEgressAgent({
      policy: createEgressPolicy({ allow: '127.0.0.1/32' }),
      resolver,
      connect: { ca: cert },
    });
    try {
      const res = await request(`https://api.example.test:${port}/`, { dispatcher: agent });
      expect(await res.body.text()).toBe('tls reached');
      expect(alpn).toEqual(['http/1.1']);
    } finally {
      await agent.close();
    }
  });

  it('opens no TLS connection to a name resolving to a private address under the default policy', async () => {
    connections = 0;
    const agent = createEgressAgent({ policy: createEgressPolicy(), resolver, connect: { ca: cert } });
    try {
      const error = await request(`https://api.example.test:${port}/`, { dispatcher: agent }).catch((e: unknown) => e);
      expect(isMtError(error) && error.code).toBe('api:connectors:address-blocked');
      expect(connections).toBe(0);
    } finally {
      await agent.close();
    }
  });
});
