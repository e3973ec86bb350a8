import { hash as digest } from 'node:crypto';
import type { ResourceKind } from '@maitento/lang';
import { BoundedMap } from '@maitento/egress';
import type { Db } from '../db/db.js';
import { storeErrors } from '../errors.js';
import { apiKeyDeleted, authenticateApiKey, type KeyIdentity } from '../keys/keys.js';
import type { CallableTool } from '../resources/tool-call.js';
import {
  getAnyVersion,
  getVersion,
  type ResourceOf,
  type StoredVersion,
  type VersionedKind,
} from '../resources/versions.js';
import type { SecretKeys } from '../secrets/keyring.js';
import { readSecretValue } from '../secrets/secrets.js';
import type { startCacheLease } from './lease.js';

/** Options of {@link createStoreCache}. */
export interface StoreCacheOptions {
  /** The master key (or keyring) secrets are encrypted under. */
  secretKey: SecretKeys;
  /** How long a decrypted secret value is kept at most (default 60 s); 0 keeps none. */
  secretMaxAgeMs?: number;
  /** Most stored versions kept (default 5000); the least recently used goes first. */
  maxVersions?: number;
  /** Most API keys kept (default 10000); the least recently used goes first. */
  maxKeys?: number;
  /** The clock, for tests of the secret max age. */
  now?: () => number;
}

/** A decrypted secret as the store reads it. */
export interface SecretValue {
  id: string;
  name: string;
  value: string;
}

/**
 * The store's reads on a call's path, cached where the data allows it. Stored versions are immutable and
 * kept by namespace, kind, name and version (the same frozen resource object every time, so per-object
 * plans stay warm); which version is latest, whether a version is enabled, API keys and decrypted secrets
 * are kept only until the database's cache epoch moves (`mt_cache_epoch`, stepped by every statement that
 * changes them, schema 7), which {@link StoreCache.sync} reads before the reads of each request or tool call,
 * unless the process's cache lease holds ({@link startCacheLease}: every writer waited for this cache to apply its
 * change, or for the lease to end).
 */
export interface StoreCache {
  /**
   * Returns at once while the cache lease holds ({@link StoreCache.live}). Otherwise reads the cache epoch (one
   * statement, shared by the callers that wait at the same time) and forgets every
   * mutable entry when it moved: every change committed before the call is seen by the reads after it. Call it
   * once before the reads of one request or tool call, and again after any wait. Fails with
   * `api:store:unavailable` when the database does not answer in time.
   */
  sync(): Promise<void>;
  /**
   * Applies an epoch read by a statement of the caller's own (the engine's write of a tool call's
   * `tool-call-started`, which selects it in the same statement), as a `sync` whose read answered with it:
   * the reads after it see every change committed before that statement, with no round trip of their own.
   */
  observe(epoch: bigint): void;
  /** Epoch reads made by `sync` so far. */
  readonly syncs: number;
  /**
   * Lets `sync` return at once, with no statement, until `until` (`performance.now()` milliseconds): the process's
   * cache lease ({@link startCacheLease}) calls it only after it has applied the epoch it read and acknowledged it.
   */
  liveUntil(until: number): void;
  /** True while `sync` needs no statement (the lease holds). */
  readonly live: boolean;
  /**
   * When a request or a tool call last read through this cache (`performance.now()` milliseconds; -Infinity before
   * the first): the lease renews often while the cache is in use and seldom while it is idle ({@link startCacheLease}).
   */
  readonly usedAt: number;
  /** {@link authenticateApiKey}, cached by the key's sha256 until the epoch moves. */
  authenticateApiKey(key: string): Promise<KeyIdentity | undefined>;
  /**
   * What `sync()` then `authenticateApiKey(key)` would answer with no statement and no wait: the kept identity when
   * `sync` has nothing to read (the lease holds, or on PGlite nothing was written since the last read) and the key
   * is kept; undefined otherwise, and the caller takes that path (the server's auth hook, on every request).
   */
  knownApiKey(key: string): KeyIdentity | undefined;
  /**
   * Whether the stored key `id` of `namespace` is still there ({@link apiKeyDeleted}'s answer, negated), kept until
   * the epoch moves (a key's deletion steps it): what a run's call made without a wait reads of the key whose
   * authority it uses, with no round trip while the cache is synced.
   */
  apiKeyExists(namespace: string, id: string): Promise<boolean>;
  /** The store's `getVersion`, cached. */
  getVersion<K extends VersionedKind>(
    namespace: string,
    kind: K,
    name: string,
    version?: number,
  ): Promise<StoredVersion<ResourceOf<K>>>;
  /**
   * The store's `getAnyVersion` (any kind: an interaction, an agent), cached as {@link StoreCache.getVersion} is;
   * undefined when there is none (not remembered: a version deployed a moment ago is found at once).
   */
  findVersion<R = unknown>(
    namespace: string,
    kind: ResourceKind,
    name: string,
    version?: number,
  ): Promise<StoredVersion<R> | undefined>;
  /** The store's `loadCallableTool`, from the cached versions. */
  loadCallableTool(namespace: string, name: string, version?: number): Promise<CallableTool>;
  /** The store's `readSecretValue` (by name or id), cached for the max age or until the epoch moves. */
  readSecretValue(namespace: string, ref: { name: string } | { id: string }): Promise<SecretValue | undefined>;
  /** Forgets everything kept. */
  close(): Promise<void>;
}

type Frozen = Omit<StoredVersion, 'enabled'>;

// Prepared once per pooled connection (a name): sent as a simple query, PostgreSQL parsed and planned it on every
// request: about 40% of the backend's CPU for it (docs/performance.md at 3251c0c, "The call path's round trip, taken apart").
const EPOCH_READ = 'SELECT epoch FROM mt_cache_epoch';

interface NameState {
  latest?: number;
  enabled: Map<number, boolean>;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const member of Object.values(value)) deepFreeze(member);
  }
  return value;
}

/** Creates the cache of `db`'s call-path reads (the same on PostgreSQL and on PGlite). */
export async function createStoreCache(db: Db, options: StoreCacheOptions): Promise<StoreCache> {
  const secretMaxAgeMs = options.secretMaxAgeMs ?? 60_000;
  const maxVersions = options.maxVersions ?? 5000;
  const maxKeys = options.maxKeys ?? 10_000;
  const now = options.now ?? Date.now;

  const versions = new BoundedMap<string, Frozen>(maxVersions);
  const states = new Map<string, Map<string, NameState>>();
  const keys = new BoundedMap<string, KeyIdentity>(maxKeys);
  const keyIds = new BoundedMap<string, boolean>(maxKeys);
  const secrets = new Map<string, Map<string, SecretValue & { expires: number }>>();
  // Bumped whenever the mutable entries are forgotten, so a read that started before does not store what it found.
  let generation = 0;
  // The last epoch read; nothing mutable is kept before the first.
  let epoch: bigint | undefined;
  let syncs = 0;
  // On PGlite, `db.writes` when the last epoch read was sent: while it has not moved, nothing was written since.
  let seenWrites: number | undefined;
  let current: Promise<void> | undefined;
  let queued: Promise<void> | undefined;
  // While the process's cache lease holds (performance.now() before it), nothing changed that this cache has not
  // applied: every writer waits for this process's acknowledgement or for the end of its lease (docs/decisions/0009-how-a-change-reaches-every-servers-cache.md).
  let leaseEnd = 0;
  let usedAt = Number.NEGATIVE_INFINITY;
  const use = () => {
    usedAt = performance.now();
  };
  const live = () => epoch !== undefined && performance.now() < leaseEnd;

  function forgetMutable(): void {
    generation++;
    states.clear();
    keys.clear();
    keyIds.clear();
    secrets.clear();
  }

  // An epoch read (by `sync` or a caller's own statement): the mutable entries go when it moved. An older read
  // answered late is ignored: the epoch only grows.
  function apply(read: bigint): void {
    if (epoch !== undefined && read <= epoch) return;
    epoch = read;
    forgetMutable();
  }

  function readEpoch(): Promise<void> {
    syncs++;
    const writes = db.writes?.();
    const done: Promise<void> = db
      .query<{ epoch: unknown }>(EPOCH_READ, [], { name: 'mt_cache_epoch_read' })
      .then(({ rows }) => {
        seenWrites = writes;
        apply(BigInt(String(rows[0].epoch)));
      })
      .finally(() => {
        if (current === done) current = undefined;
      });
    current = done;
    return done;
  }

  // True when `sync` has nothing to read.
  const synced = () => live() || (seenWrites !== undefined && seenWrites === db.writes?.());

  function sync(): Promise<void> {
    use();
    if (synced()) return Promise.resolve();
    if (current === undefined) return readEpoch();
    // The read in flight may have been sent before a change this caller must see: wait for the next one. When it
    // fails, the database did not answer in time: its waiters fail with it rather than wait a second deadline.
    queued ??= current.then(
      () => {
        queued = undefined;
        return current ?? readEpoch();
      },
      (error: unknown) => {
        queued = undefined;
        throw error;
      },
    );
    return queued;
  }

  // Whether what a read started at generation `started` found may be kept.
  const fresh = (started: number) => epoch !== undefined && started === generation;

  async function cachedVersion<K extends VersionedKind>(
    namespace: string,
    kind: K,
    name: string,
    version?: number,
  ): Promise<StoredVersion<ResourceOf<K>>> {
    const found = await cachedAny<ResourceOf<K>>(namespace, kind, name, version);
    // Not found: the store's own read again, for its error and its did-you-mean.
    return found ?? getVersion(db, namespace, kind, name, version);
  }

  async function cachedAny<R>(
    namespace: string,
    kind: ResourceKind,
    name: string,
    version?: number,
  ): Promise<StoredVersion<R> | undefined> {
    use();
    const nameKey = `${kind}\0${name}`;
    const state = states.get(namespace)?.get(nameKey);
    const wanted = version ?? state?.latest;
    const enabled = wanted === undefined ? undefined : state?.enabled.get(wanted);
    const kept = enabled === undefined ? undefined : versions.get(`${namespace}\0${nameKey}\0${wanted}`);
    if (kept !== undefined) return { ...kept, enabled } as StoredVersion<R>;
    const started = generation;
    const loaded = await getAnyVersion(db, namespace, kind, name, version);
    if (loaded === undefined) return undefined;
    const versionKey = `${namespace}\0${nameKey}\0${loaded.version}`;
    let stored = versions.get(versionKey);
    // A version number is immutable unless its namespace was deleted and deployed anew: the hash tells.
    if (stored === undefined || stored.hash !== loaded.hash) {
      const { enabled: _, ...immutable } = loaded;
      stored = deepFreeze(immutable);
      versions.set(versionKey, stored);
    }
    if (fresh(started)) {
      const names = states.get(namespace) ?? new Map<string, NameState>();
      states.set(namespace, names);
      const state = names.get(nameKey) ?? { enabled: new Map<number, boolean>() };
      names.set(nameKey, state);
      if (version === undefined) state.latest = loaded.version;
      state.enabled.set(loaded.version, loaded.enabled);
    }
    return { ...stored, enabled: loaded.enabled } as StoredVersion<R>;
  }

  return {
    sync,

    observe: apply,

    get syncs() {
      return syncs;
    },

    liveUntil(until) {
      leaseEnd = until;
    },

    get live() {
      return live();
    },

    get usedAt() {
      return usedAt;
    },

    knownApiKey(key) {
      use();
      return synced() ? keys.get(digest('sha256', key, 'base64')) : undefined;
    },

    async authenticateApiKey(key) {
      use();
      // One-shot (no Hash object to make): taken on every request.
      const hash = digest('sha256', key, 'base64');
      const known = keys.get(hash);
      if (known !== undefined) return known;
      const started = generation;
      const identity = await authenticateApiKey(db, key);
      // Unknown keys are not remembered: a key created a moment ago must work at once.
      if (identity === undefined) return undefined;
      const frozen = Object.freeze(identity);
      if (fresh(started)) keys.set(hash, frozen);
      return frozen;
    },

    async apiKeyExists(namespace, id) {
      const idKey = `${namespace}\0${id}`;
      const known = keyIds.get(idKey);
      if (known !== undefined) return known;
      const started = generation;
      const exists = !(await apiKeyDeleted(db, namespace, id));
      if (fresh(started)) keyIds.set(idKey, exists);
      return exists;
    },

    getVersion: cachedVersion,

    findVersion: cachedAny,

    async loadCallableTool(namespace, name, version) {
      const tool = await cachedVersion(namespace, 'tool', name, version);
      if (!tool.enabled) throw storeErrors.create('api:extops:version-disabled', { name, version: tool.version });
      const pin = tool.pins.find((p) => p.kind === 'connector');
      const connector = await cachedVersion(namespace, 'connector', pin?.name ?? tool.resource.connector, pin?.version);
      if (!connector.enabled) {
        throw storeErrors.create('api:connectors:version-disabled', {
          name: connector.name,
          version: connector.version,
        });
      }
      return { tool, connector };
    },

    async readSecretValue(namespace, ref) {
      use();
      const refKey = 'id' in ref ? `id\0${ref.id}` : `name\0${ref.name}`;
      if (secretMaxAgeMs > 0) {
        const entry = secrets.get(namespace)?.get(refKey);
        if (entry !== undefined && entry.expires > now()) return { id: entry.id, name: entry.name, value: entry.value };
      }
      const started = generation;
      const secret = await readSecretValue(db, options.secretKey, namespace, ref);
      // A missing secret is not remembered: one created a moment ago must be used at once.
      if (secret !== undefined && secretMaxAgeMs > 0 && fresh(started)) {
        const names = secrets.get(namespace) ?? new Map<string, SecretValue & { expires: number }>();
        secrets.set(namespace, names);
        names.set(refKey, { ...secret, expires: now() + secretMaxAgeMs });
      }
      return secret;
    },

    async close() {
      leaseEnd = 0;
      epoch = undefined;
      forgetMutable();
      versions.clear();
    },
  };
}
