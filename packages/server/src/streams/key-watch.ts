import { type Db, existingApiKeys, FALLBACK_POLL_MS, type Wakeups, wakeTopics } from '@maitento/store';

/** Ends what an API key opened (run event streams, MCP sessions) once the key is deleted, through any server. */
export interface KeyWatch {
  /** Calls `onDeleted` once, when key `keyId` is deleted; returns the unwatch. */
  watch(keyId: string, onDeleted: () => void): () => void;
  /** Stops watching every key. */
  stop(): void;
}

/**
 * Watches keys through the wake-up `key:<id>` (sent when a key is deleted): on a wake-up the key is read, and
 * its watchers are told only when it is gone, so a spurious wake-up (every subscriber is woken after a lost
 * LISTEN connection comes back) ends nothing. While wake-ups are not listening, every watched key is read every
 * `fallbackMs`, in one query.
 */
export function watchKeys(
  db: Db,
  wakeups: Wakeups,
  log: { warn(obj: object, msg: string): void },
  fallbackMs = FALLBACK_POLL_MS,
): KeyWatch {
  const watched = new Map<string, { fns: Set<() => void>; off: () => void }>();
  const pending = new Set<string>();
  let running = false;

  async function check(ids: string[]): Promise<void> {
    const existing = await existingApiKeys(db, ids);
    for (const id of ids) {
      const entry = watched.get(id);
      if (entry === undefined || existing.has(id)) continue;
      watched.delete(id);
      entry.off();
      for (const fn of entry.fns) fn();
    }
  }

  async function run(): Promise<void> {
    if (running) return;
    running = true;
    try {
      while (pending.size > 0) {
        const ids = [...pending];
        pending.clear();
        await check(ids).catch((err) => log.warn({ err }, 'checking whether watched API keys still exist failed'));
      }
    } finally {
      running = false;
    }
  }

  const fallback = setInterval(() => {
    if (wakeups.listening || watched.size === 0) return;
    for (const id of watched.keys()) pending.add(id);
    void run();
  }, fallbackMs);
  fallback.unref();

  return {
    watch(keyId, onDeleted) {
      let entry = watched.get(keyId);
      if (entry === undefined) {
        const off = wakeups.on(wakeTopics.key(keyId), () => {
          pending.add(keyId);
          void run();
        });
        entry = { fns: new Set(), off };
        watched.set(keyId, entry);
      }
      // Each watch is its own entry, so one function watched twice is unwatched once each.
      const fn = () => onDeleted();
      const current = entry;
      current.fns.add(fn);
      return () => {
        current.fns.delete(fn);
        if (current.fns.size === 0 && watched.get(keyId) === current) {
          watched.delete(keyId);
          current.off();
        }
      };
    },
    stop() {
      clearInterval(fallback);
      for (const entry of watched.values()) entry.off();
      watched.clear();
    },
  };
}
