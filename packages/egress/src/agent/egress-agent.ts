import type { LookupAddress, LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import { Agent, buildConnector } from 'undici';
import { checkAddress, unbracket } from '../address/check-address.js';
import { addressBlockedError } from '../errors.js';
import { checkHostName } from '../names/host-name.js';
import { type EgressPolicy, isPlatformAddress } from '../policy/egress-policy.js';
import { resolveAndCheck } from '../resolve/authorize-url.js';
import { type Resolver, systemResolver } from '../resolve/resolver.js';

/** The callback `net.connect` hands to a custom `lookup`: one address, or every address when `all` is set. */
export type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/** A `lookup` function for `net.connect`/`tls.connect`. */
export type EgressLookup = (hostname: string, options: LookupOptions, callback: LookupCallback) => void;

/**
 * A `net.connect` lookup that resolves through `resolver`, refuses the connection when any answer is
 * not allowed or is the platform's own host on `port` (on any port when `port` is not given), and
 * otherwise answers with the checked addresses only, so the socket can only connect to an address
 * that was checked.
 */
export function createEgressLookup(
  policy: EgressPolicy,
  resolver: Resolver = systemResolver,
  port?: number,
): EgressLookup {
  return (hostname, options, callback) => {
    const name = checkHostName(hostname, policy.allow, policy.deny);
    if (!name.ok) {
      process.nextTick(callback, addressBlockedError(hostname, name.reason), '');
      return;
    }
    resolveAndCheck(hostname, policy, resolver, port).then(
      (checked) => {
        const family = options.family === 4 || options.family === 6 ? options.family : undefined;
        const usable = family === undefined ? checked : checked.filter((a) => a.family === family);
        if (usable.length === 0) {
          const error: NodeJS.ErrnoException = new Error(`${hostname} has no IPv${family} address`);
          error.code = 'ENOTFOUND';
          callback(error, '');
          return;
        }
        // Node 20 asks for every address (`all: true`) when autoSelectFamily is on, else for one.
        if (options.all) callback(null, usable);
        else callback(null, usable[0].address, usable[0].family);
      },
      (error: NodeJS.ErrnoException) => callback(error, ''),
    );
  };
}

/** Options of {@link createEgressAgent}. */
export interface EgressAgentOptions {
  /** The rules every connection must pass. */
  policy: EgressPolicy;
  /** How names are resolved (the system resolver by default). */
  resolver?: Resolver;
  /** TLS and connect settings: a CA for tests, certificate checking, the connect timeout in ms. */
  connect?: { ca?: string | Buffer; rejectUnauthorized?: boolean; timeout?: number };
  /** How long an idle keep-alive socket is kept, in ms. */
  keepAliveTimeout?: number;
  /** The most connections per origin. */
  connections?: number;
}

/**
 * An undici Agent whose every connection goes to a checked address: names through a lookup that
 * checks each answer, IP literals checked before the socket is opened. It never uses HTTP(S)_PROXY.
 * It speaks HTTP/1.1 only: undici 8 would offer HTTP/2 by ALPN to a TLS upstream, but the gateway's limits
 * and its hostile-upstream tests are HTTP/1.1's (docs/decisions/0037-current-majors-of-the-tools-we-build-on.md).
 */
export function createEgressAgent(options: EgressAgentOptions): Agent {
  const { policy, resolver = systemResolver } = options;
  const { timeout, ...tls } = options.connect ?? {};
  // net.connect does not tell a lookup the port, and the platform rule needs it: one connector per port.
  const byPort = new Map<number, buildConnector.connector>();
  const baseFor = (port: number): buildConnector.connector => {
    let base = byPort.get(port);
    if (base === undefined) {
      base = buildConnector({
        ...tls,
        allowH2: false,
        timeout: timeout ?? 10_000,
        lookup: createEgressLookup(policy, resolver, port),
      });
      byPort.set(port, base);
    }
    return base;
  };
  const connector: buildConnector.connector = (connectOptions, callback) => {
    const host = unbracket(connectOptions.hostname);
    const port = Number(connectOptions.port) || (connectOptions.protocol === 'https:' ? 443 : 80);
    // net.connect skips lookup for IP literals, so they are judged here, before any socket exists.
    if (isIP(host) !== 0) {
      const verdict = checkAddress(host, policy);
      if (!verdict.ok) {
        process.nextTick(callback, addressBlockedError(host, `${verdict.reason} (${verdict.range})`), null);
        return;
      }
      // Compared by canonical address: [::ffff:127.0.0.1] is the platform host 127.0.0.1, ::1 is [::1].
      if (isPlatformAddress(policy, host, port)) {
        process.nextTick(callback, addressBlockedError(host, "the host is the platform's own"), null);
        return;
      }
    }
    baseFor(port)(connectOptions, callback);
  };
  return new Agent({
    connect: connector,
    allowH2: false,
    ...(options.keepAliveTimeout === undefined ? {} : { keepAliveTimeout: options.keepAliveTimeout }),
    ...(options.connections === undefined ? {} : { connections: options.connections }),
  });
}
