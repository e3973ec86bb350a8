import { createEgressPolicy } from '@maitento/egress';
import { gatewayErrors } from '../errors.js';
import type { GatewayOptions } from './types.js';

/** The defaults every gateway option falls back to. */
export const gatewayDefaults = Object.freeze({
  timeoutMs: 100_000,
  maxResponseBytes: 100_000,
  maxRedirects: 5,
  /** How long a host that passed the address check is remembered before it is looked up again. */
  authorizationTtlMs: 30_000,
  /** How long an MCP session with no call in flight stays open for the next call. */
  mcpSessionIdleMs: 30_000,
});

/** Options after validation, with every default filled in. */
export interface ResolvedOptions extends GatewayOptions {
  timeoutMs: number;
  maxResponseBytes: number;
  maxRedirects: number;
  mcpSessionIdleMs: number;
  /** The platform's origin, normalised by the URL parser. */
  platformOrigin?: string;
}

function positiveInteger(name: string, value: number | undefined, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min) {
    throw gatewayErrors.create('api:gateway:options-invalid', { reason: `${name} must be an integer >= ${min}` });
  }
  return value;
}

/** Validates `options` and merges them over {@link gatewayDefaults}; throws `api:gateway:options-invalid`. */
export function resolveOptions(options: GatewayOptions): ResolvedOptions {
  if (options === undefined || options === null || options.policy === undefined) {
    throw gatewayErrors.create('api:gateway:options-invalid', { reason: 'policy is required' });
  }
  const resolved: ResolvedOptions = {
    ...options,
    timeoutMs: positiveInteger('timeoutMs', options.timeoutMs, gatewayDefaults.timeoutMs, 1),
    maxResponseBytes: positiveInteger(
      'maxResponseBytes',
      options.maxResponseBytes,
      gatewayDefaults.maxResponseBytes,
      1,
    ),
    maxRedirects: positiveInteger('maxRedirects', options.maxRedirects, gatewayDefaults.maxRedirects, 0),
    mcpSessionIdleMs: positiveInteger(
      'mcp.sessionIdleMs',
      options.mcp?.sessionIdleMs,
      gatewayDefaults.mcpSessionIdleMs,
      0,
    ),
  };
  if (options.platform !== undefined) {
    let url: URL;
    try {
      url = new URL(options.platform.origin);
    } catch {
      throw gatewayErrors.create('api:gateway:options-invalid', { reason: 'platform.origin is not a URL' });
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw gatewayErrors.create('api:gateway:options-invalid', { reason: 'platform.origin is not http(s)' });
    }
    if (typeof options.platform.token !== 'function') {
      throw gatewayErrors.create('api:gateway:options-invalid', { reason: 'platform.token must be a function' });
    }
    resolved.platformOrigin = url.origin;
    // The platform's host is one of its own hosts: only `auth = "Maitento"` calls (which skip this policy) reach it.
    const own = createEgressPolicy({ platformHosts: [url.host] }).platformHosts;
    resolved.policy = Object.freeze({
      allow: options.policy.allow,
      deny: options.policy.deny,
      platformHosts: Object.freeze([...new Set([...options.policy.platformHosts, ...own])]),
    });
  }
  return resolved;
}
