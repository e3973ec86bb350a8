import type { FastifyBaseLogger } from 'fastify';
import type { ServerContext } from '../internal/context.js';
import type { McpSession } from './session.js';
import type { McpSettings } from './settings.js';

/** Watches the namespaces of open MCP sessions for tool changes. */
export interface ToolChangeWatcher {
  /** Records a namespace's current state, so that only later changes are told. */
  baseline(namespace: string): void;
  stop(): void;
}

// One number per namespace that changes with any tool, connector or agent version added, disabled or enabled.
async function fingerprint(ctx: ServerContext, namespace: string): Promise<string> {
  const { rows } = await ctx.db.query<{ n: number; h: string }>(
    "SELECT count(*)::int AS n, coalesce(sum(hashtext(kind || ':' || name || ':' || version || ':' || enabled::text)::bigint), 0)::text AS h " +
      "FROM mt_resource_versions WHERE namespace = $1 AND kind IN ('tool', 'connector', 'agent')",
    [namespace],
  );
  return `${rows[0]?.n}:${rows[0]?.h}`;
}

/**
 * Polls, every `listChangedPollMs`, one fingerprint per namespace that has open sessions, and sends
 * `notifications/tools/list_changed` to each of its sessions when it changed: a deploy, a disable or an
 * enable made through any server on the database. Sessions idle for `sessionIdleMs` are closed.
 */
export function watchToolChanges(
  ctx: ServerContext,
  settings: McpSettings,
  sessions: Map<string, McpSession>,
  log: FastifyBaseLogger,
): ToolChangeWatcher {
  const known = new Map<string, string>();
  let running = false;
  const tick = async () => {
    if (running) return;
    running = true;
    try {
      const now = Date.now();
      for (const [id, session] of sessions) {
        if (now - session.lastUsed > settings.sessionIdleMs) {
          sessions.delete(id);
          await session.close().catch(() => undefined);
        }
      }
      const namespaces = new Set([...sessions.values()].map((s) => s.scope.namespace));
      for (const namespace of known.keys()) if (!namespaces.has(namespace)) known.delete(namespace);
      for (const namespace of namespaces) {
        const now = await fingerprint(ctx, namespace);
        const before = known.get(namespace);
        known.set(namespace, now);
        if (before === undefined || before === now) continue;
        for (const session of sessions.values()) {
          if (session.scope.namespace === namespace) await session.server.sendToolListChanged().catch(() => undefined);
        }
      }
    } catch (err) {
      log.warn({ err }, 'checking MCP sessions for tool changes failed');
    } finally {
      running = false;
    }
  };
  const timer = setInterval(tick, settings.listChangedPollMs);
  timer.unref();
  return {
    baseline: (namespace) => {
      if (known.has(namespace)) return;
      fingerprint(ctx, namespace)
        .then((f) => {
          if (!known.has(namespace)) known.set(namespace, f);
        })
        .catch((err) => log.warn({ err }, 'reading the tools of an MCP session failed'));
    },
    stop: () => clearInterval(timer),
  };
}
