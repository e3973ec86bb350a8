import { describe, expect, it } from 'vitest';
import { createEgressPolicy } from '../policy/egress-policy.js';
import { checkConnectorUrl } from './check-connector-url.js';

const policy = createEgressPolicy();

// Every spelling of a non-public target that the WHATWG URL parser accepts, plus names and tricks.
const hostile: string[] = [
  // IPv4 loopback in every form the URL parser turns into 127.0.0.1
  'http://127.0.0.1/',
  'http://127.0.0.1:8080/orders',
  'http://127.1/',
  'http://127.0.1/',
  'http://2130706433/',
  'http://0177.0.0.1/',
  'http://0177.0.0.01/',
  'http://0x7f.1/',
  'http://0x7f000001/',
  'http://0x7F.0x0.0x0.0x1/',
  'http://017700000001/',
  'http://127.0.0.1./',
  'http://１２７.０.０.１/',
  'http://127.255.255.254/',
  // "this network", unspecified
  'http://0/',
  'http://0x0/',
  'http://0.0.0.0/',
  'http://00000/',
  'http://[::]/',
  'http://[0:0:0:0:0:0:0:0]/',
  // private, shared, link-local, metadata IPs
  'http://10.0.0.1/',
  'http://10.255.255.255/',
  'http://167772161/',
  'http://172.16.0.1/',
  'http://172.31.255.255/',
  'http://192.168.1.1/',
  'http://0xc0a80101/',
  'http://100.64.0.1/',
  'http://100.100.100.200/',
  'http://169.254.169.254/latest/meta-data/',
  'http://2852039166/',
  'http://0xa9fea9fe/',
  'http://0251.0376.0251.0376/',
  // other IANA special-purpose IPv4
  'http://192.0.0.1/',
  'http://192.0.0.9/',
  'http://192.0.2.10/',
  'http://192.88.99.1/',
  'http://198.18.0.1/',
  'http://198.19.255.255/',
  'http://198.51.100.7/',
  'http://203.0.113.9/',
  'http://224.0.0.1/',
  'http://239.255.255.250/',
  'http://240.0.0.1/',
  'http://255.255.255.255/',
  'http://4294967295/',
  // IPv6 loopback and every way to carry 127.0.0.1 / 169.254.169.254 inside IPv6
  'http://[::1]/',
  'http://[0:0:0:0:0:0:0:1]/',
  'http://[::ffff:127.0.0.1]/',
  'http://[::ffff:7f00:1]/',
  'http://[0:0:0:0:0:ffff:127.0.0.1]/',
  'http://[::ffff:169.254.169.254]/',
  'http://[::ffff:a9fe:a9fe]/',
  'http://[::ffff:10.0.0.1]/',
  'http://[::127.0.0.1]/',
  'http://[::7f00:1]/',
  'http://[::8.8.8.8]/',
  'http://[::ffff:0:127.0.0.1]/',
  'http://[64:ff9b::7f00:1]/',
  'http://[64:ff9b::127.0.0.1]/',
  'http://[64:ff9b::a9fe:a9fe]/',
  'http://[64:ff9b:1::7f00:1]/',
  'http://[2002:7f00:1::]/',
  'http://[2002:a9fe:a9fe::1]/',
  'http://[2002:5db8:d70e::1]/',
  'http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/',
  'http://[2001::1]/',
  // other special-purpose IPv6
  'http://[100::1]/',
  'http://[100:0:0:1::1]/',
  'http://[2001:2::1]/',
  'http://[2001:10::1]/',
  'http://[2001:db8::1]/',
  'http://[3fff::1]/',
  'http://[5f00::1]/',
  'http://[fc00::1]/',
  'http://[fd00:ec2::254]/',
  'http://[fe80::1]/',
  'http://[febf::1]/',
  'http://[fec0::1]/',
  'http://[ff02::1]/',
  'http://[4000::1]/',
  'http://[1::1]/',
  // names
  'http://localhost/',
  'http://localhost:3000/',
  'http://LOCALHOST/',
  'http://localhost./',
  'http://localhost../',
  'http://api.localhost/',
  'http://ⓛocalhost/',
  'http://%6c%6fcalhost/',
  'http://orders-api/',
  'http://orders-api./',
  'http://metadata/',
  'http://instance-data/',
  'http://metadata.google.internal/computeMetadata/v1/',
  'http://metadata.google.internal./',
  'http://orders.internal/',
  'http://foo.internal./',
  'http://printer.local/',
  'http://nas.home.arpa/',
  'http://router.lan/',
  'http://wiki.intranet/',
  'http://hr.corp/',
  'http://vault.private/',
  'http://box.localdomain/',
  'http://kubernetes.default.svc/',
  'http://api.cluster.local/',
  'http://1.0.0.127.in-addr.arpa/',
  'http://example.onion/',
  'http://host.docker.internal/',
  'http://127.0.0.1../',
  'http://foo..example.com/',
  'http://1.2.3.4.5/',
  // user info, fragments, parser-differential tricks
  'http://127.0.0.1:80@evil.com/',
  'http://user:pass@api.example.com/',
  'http://user@api.example.com/',
  'http://@api.example.com/',
  'http://evil.com#@127.0.0.1',
  'http://evil.com/#frag',
  'http://evil.com\\@127.0.0.1/',
  'http://127.0.0.1\\.evil.com/',
  'http:\\\\127.0.0.1/',
  'http:/127.0.0.1/',
  'http:127.0.0.1/',
  'http://api.example.com\t/',
  'http://api.exa\nmple.com/',
  'http://api.example.com /',
  ' http://api.example.com/',
  'http://api.example.com\u0000.evil/',
  'http://api.exam\u200bple.com/',
  'http://api.example.com\u00a0/',
  'http://api.example.com:0/',
  'http://{tenant}.example.com/',
  'http://%%host%%/',
  // schemes
  'file:///etc/passwd',
  'ftp://ftp.example.com/',
  'gopher://127.0.0.1:6379/_INFO',
  'ws://api.example.com/',
  'javascript:alert(1)',
  'data:text/plain,hi',
  'api.example.com/orders',
  '/orders',
  '',
];

const publicUrls: string[] = [
  'https://api.open-meteo.com/v1/forecast',
  'https://api.open-meteo.com/v1/forecast?latitude=52.52&longitude=13.41',
  'https://orders.example.com/orders/{orderId}',
  'http://93.184.215.14/',
  'http://8.8.8.8:8080/x',
  'http://[2606:4700::1111]/',
  'https://[2a00:1450:4001:80b::200e]:8443/path',
  'http://[64:ff9b::5db8:d70e]/',
  'http://[::ffff:93.184.215.14]/',
  'https://API.Example.COM./v1',
  'https://bücher.example/',
  'http://api.example.test/',
  'https://localhost.example.com/',
  'https://internal.example.com/',
  'https://my-metadata.example.com/',
  'http://172.32.0.1/',
  'http://100.128.0.1/',
  'http://192.0.3.1/',
  'http://198.20.0.1/',
  'http://223.255.255.255/',
  'http://11.0.0.1/',
];

describe('checkConnectorUrl', () => {
  it.each(hostile)('refuses %j', (url) => {
    const verdict = checkConnectorUrl(url, policy);
    expect(verdict.ok).toBe(false);
    if (!verdict.ok) {
      expect(verdict.code).toBe('api:connectors:address-blocked');
      expect(verdict.reason.length).toBeGreaterThan(0);
    }
  });

  it.each(publicUrls)('accepts the public URL %j', (url) => {
    const verdict = checkConnectorUrl(url, policy);
    expect(verdict).toMatchObject({ ok: true });
  });

  it('judges the host new URL() produces, and reports that host', () => {
    expect(checkConnectorUrl('http://0x7f.1/', policy)).toMatchObject({ ok: false, host: '127.0.0.1' });
    expect(checkConnectorUrl('http://[::ffff:127.0.0.1]/', policy)).toMatchObject({
      ok: false,
      host: '[::ffff:7f00:1]',
    });
    expect(checkConnectorUrl('http://127.0.0.1:80@evil.com/', policy)).toMatchObject({ ok: false, host: 'evil.com' });
  });

  it('says which range refused an IPv4 address carried inside IPv6', () => {
    const verdict = checkConnectorUrl('http://[::ffff:169.254.169.254]/', policy);
    expect(verdict.ok).toBe(false);
    if (!verdict.ok) expect(verdict.reason).toContain('169.254.0.0/16');
  });

  it('returns the parsed URL of an accepted connector URL', () => {
    const verdict = checkConnectorUrl('https://api.open-meteo.com/v1/forecast', policy);
    expect(verdict.ok && verdict.url.hostname).toBe('api.open-meteo.com');
  });

  it("refuses the platform's own host, on its port or on every port", () => {
    const withPort = createEgressPolicy({ platformHosts: ['mt.example.com:8443'] });
    expect(checkConnectorUrl('https://mt.example.com:8443/api', withPort).ok).toBe(false);
    expect(checkConnectorUrl('https://mt.example.com/api', withPort).ok).toBe(true);
    const anyPort = createEgressPolicy({ platformHosts: ['mt.example.com'] });
    expect(checkConnectorUrl('https://MT.example.com./api', anyPort).ok).toBe(false);
    expect(checkConnectorUrl('http://mt.example.com:9000/', anyPort).ok).toBe(false);
  });
});
