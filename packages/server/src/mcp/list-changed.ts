import { wakeTopics } from '@maitento/store';
import type { FastifyBaseLogger } from 'fastify';
import type { ServerContext } from '../server/context.js';
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
 * Sends `notifications/tools/list_changed` to the open sessions of a namespace when its fingerprint changed: a
 * deploy, a disable or an enable made through any server on the database. The fingerprint is read when
 * `resources:<namespace>` is woken, and, while wake-ups are not listening, every `listChangedPollMs` (the
 * fallback). Every `listChangedPollMs` too, sessions idle for `sessionIdleMs` are closed.
 */
export function watchToolChanges(
  ctx: ServerContext,
  settings: McpSettings,
  sessions: Map<string, McpSession>,
  log: FastifyBaseLogger,
): ToolChangeWatcher {
  const known = new Map<string, string>();
  const subscriptions = new Map<string, () => void>();
  const pending = new Set<string>();
  let running = false;

  async function check(namespace: string): Promise<void> {
    const now = await fingerprint(ctx, namespace);
    const before = known.get(namespace);
    known.set(namespace, now);
    if (before === undefined || before === now) return;
    for (const session of sessions.values()) {
      if (session.scope.namespace === namespace) await session.server.sendToolListChanged().catch(() => undefined);
    }
  }

  // Checks the namespaces asked for, one at a time; one asked for again meanwhile is checked again.
  async function run(): Promise<void> {
    if (running) return;
    running = true;
    try {
      for (const namespace of pending) {
        pending.delete(namespace);
        await check(namespace).catch((err) => log.warn({ err }, 'checking MCP sessions for tool changes failed'));
      }
    } finally {
      running = false;
    }
  }

  function subscribe(namespace: string): void {
    if (subscriptions.has(namespace)) return;
    const off = ctx.wakeups.on(wakeTopics.resources(namespace), () => {
      pending.add(namespace);
      void run();
    });
    subscriptions.set(namespace, off);
  }

  const tick = async () => {
    const now = Date.now();
    for (const [id, session] of sessions) {
      if (now - session.lastUsed > settings.sessionIdleMs) {
        sessions.delete(id);
        await session.close().catch(() => undefined);
      }
    }
    const namespaces = new Set([...sessions.values()].map((s) => s.scope.namespace));
    for (const [namespace, off] of subscriptions) {
      if (namespaces.has(namespace)) continue;
      off();
      subscriptions.delete(namespace);
      known.delete(namespace);
    }
    if (ctx.wakeups.listening) return;
    for (const namespace of namespaces) pending.add(namespace);
    await run();
  };
  const timer = setInterval(() => {
    tick().catch((err) => log.warn({ err }, 'checking MCP sessions failed'));
  }, settings.listChangedPollMs);
  timer.unref();
  return {
    baseline: (namespace) => {
      subscribe(namespace);
      if (known.has(namespace)) return;
      fingerprint(ctx, namespace)
        .then((f) => {
          if (!known.has(namespace)) known.set(namespace, f);
        })
        .catch((err) => log.warn({ err }, 'reading the tools of an MCP session failed'));
    },
    stop: () => {
      clearInterval(timer);
      for (const off of subscriptions.values()) off();
      subscriptions.clear();
    },
  };
}
