import { createHash } from 'node:crypto';
import type { Db } from '../db/db.js';
import { storeErrors } from '../errors.js';
import { authenticateApiKey, type KeyIdentity } from '../keys/keys.js';
import type { CallableTool } from '../resources/tool-call.js';
import { getVersion, type ResourceOf, type StoredVersion, type VersionedKind } from '../resources/versions.js';
import type { SecretKeys } from '../secrets/keyring.js';
import { readSecretValue } from '../secrets/secrets.js';
import { type ChangeListener, listenForChanges } from './change-listener.js';
import type { StoreChange } from './changes.js';

/** Options of {@link createStoreCache}. */
export interface StoreCacheOptions {
  /** The master key (or keyring) secrets are encrypted under. */
  secretKey: SecretKeys;
  /** How long a decrypted secret value is kept (default 60 s); 0 keeps none. */
  secretMaxAgeMs?: number;
  /** Most stored versions kept (default 5000); the oldest goes first. */
  maxVersions?: number;
  /** Most API keys kept (default 10000). */
  maxKeys?: number;
  /** PostgreSQL to LISTEN on; default the pg database's own connection string. Ignored on PGlite. */
  listenUrl?: string;
  /**
   * How long an answered round trip on the LISTEN connection lets the cache be trusted without another
   * (default 1000 ms, renewed every quarter of it); every cache on one database must use the same. For tests.
   */
  leaseMs?: number;
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
 * are kept only while every change reaches this process: at once for changes made through it
 * ({@link StoreCache.changed}), by LISTEN/NOTIFY for changes made by other servers on PostgreSQL.
 */
export interface StoreCache {
  /** True while changes of other servers reach this cache (always on PGlite, one process). */
  readonly listening: boolean;
  /**
   * Waits until every change a writer has answered for (by any server, see {@link changed}) has been applied:
   * call it once before the reads of one request or tool call. Nothing while the LISTEN connection's lease holds
   * (renewed four times a lease in the background) and on PGlite; otherwise one round trip on the LISTEN
   * connection, shared by concurrent callers.
   */
  sync(): Promise<void>;
  /** Round trips made on the LISTEN connection by `sync` and by the lease's renewals so far. */
  readonly syncs: number;
  /** {@link authenticateApiKey}, cached by the key's sha256 until the key is deleted. */
  authenticateApiKey(key: string): Promise<KeyIdentity | undefined>;
  /** The store's `getVersion`, cached. */
  getVersion<K extends VersionedKind>(
    namespace: string,
    kind: K,
    name: string,
    version?: number,
  ): Promise<StoredVersion<ResourceOf<K>>>;
  /** The store's `loadCallableTool`, from the cached versions. */
  loadCallableTool(namespace: string, name: string, version?: number): Promise<CallableTool>;
  /** The store's `readSecretValue` (by name or id), cached for the max age or until the secret changes. */
  readSecretValue(namespace: string, ref: { name: string } | { id: string }): Promise<SecretValue | undefined>;
  /**
   * Call after committing a write this process made: forgets what `change` makes stale here at once, and
   * resolves once every other cache listening on the database has applied it too (or once the lease of one
   * that does not answer has run out), so a client answered after it finds the change on every server.
   */
  changed(change: StoreChange): Promise<void>;
  /** Stops listening. */
  close(): Promise<void>;
}

type Frozen = Omit<StoredVersion, 'enabled'>;

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

function setBounded<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  if (map.size >= max && !map.has(key)) map.delete(map.keys().next().value as K);
  map.set(key, value);
}

/**
 * Creates the cache of `db`'s call-path reads. On PostgreSQL it LISTENs on a dedicated connection and keeps
 * mutable data only while that connection is up (reconnecting every second; everything is forgotten when it
 * comes back); on PGlite, one process's database, changes are applied in-process only.
 */
export async function createStoreCache(db: Db, options: StoreCacheOptions): Promise<StoreCache> {
  const secretMaxAgeMs = options.secretMaxAgeMs ?? 60_000;
  const maxVersions = options.maxVersions ?? 5000;
  const maxKeys = options.maxKeys ?? 10_000;
  const now = options.now ?? Date.now;

  const versions = new Map<string, Frozen>();
  const states = new Map<string, Map<string, NameState>>();
  const keys = new Map<string, KeyIdentity>();
  const secrets = new Map<string, Map<string, SecretValue & { expires: number }>>();
  // Bumped by every change, so a read that started before a change does not store what it found.
  let generation = 0;
  let listening = db.driver === 'pglite';

  function forgetMutable(): void {
    generation++;
    states.clear();
    keys.clear();
    secrets.clear();
  }

  function forget(change: StoreChange): void {
    generation++;
    if (change.kind === 'resources') states.delete(change.namespace);
    else if (change.kind === 'secret') secrets.delete(change.namespace);
    else {
      for (const [hash, identity] of keys) if (identity.keyId === change.id) keys.delete(hash);
    }
  }

  let listener: ChangeListener | undefined;
  const listenUrl = options.listenUrl ?? (db as { connectionString?: string }).connectionString;
  if (db.driver === 'pg' && listenUrl !== undefined) {
    listener = await listenForChanges(
      listenUrl,
      {
        onChange: forget,
        onListening: () => {
          forgetMutable();
          listening = true;
        },
        onLost: () => {
          listening = false;
          forgetMutable();
        },
      },
      { leaseMs: options.leaseMs },
    );
  }

  async function cachedVersion<K extends VersionedKind>(
    namespace: string,
    kind: K,
    name: string,
    version?: number,
  ): Promise<StoredVersion<ResourceOf<K>>> {
    const nameKey = `${kind}\0${name}`;
    if (listening) {
      const state = states.get(namespace)?.get(nameKey);
      const wanted = version ?? state?.latest;
      const enabled = wanted === undefined ? undefined : state?.enabled.get(wanted);
      const stored = enabled === undefined ? undefined : versions.get(`${namespace}\0${nameKey}\0${wanted}`);
      if (stored !== undefined) return { ...stored, enabled } as StoredVersion<ResourceOf<K>>;
    }
    const started = generation;
    const loaded = await getVersion(db, namespace, kind, name, version);
    const versionKey = `${namespace}\0${nameKey}\0${loaded.version}`;
    let stored = versions.get(versionKey);
    if (stored === undefined) {
      const { enabled: _, ...immutable } = loaded;
      stored = deepFreeze(immutable);
      setBounded(versions, versionKey, stored, maxVersions);
    }
    if (listening && started === generation) {
      const names = states.get(namespace) ?? new Map<string, NameState>();
      states.set(namespace, names);
      const state = names.get(nameKey) ?? { enabled: new Map<number, boolean>() };
      names.set(nameKey, state);
      if (version === undefined) state.latest = loaded.version;
      state.enabled.set(loaded.version, loaded.enabled);
    }
    return { ...stored, enabled: loaded.enabled } as StoredVersion<ResourceOf<K>>;
  }

  return {
    get listening() {
      return listening;
    },

    sync() {
      return listener === undefined ? Promise.resolve() : listener.sync();
    },

    get syncs() {
      return listener?.syncs ?? 0;
    },

    async authenticateApiKey(key) {
      const hash = createHash('sha256').update(key, 'utf8').digest('base64');
      if (listening) {
        const known = keys.get(hash);
        if (known !== undefined) return known;
      }
      const started = generation;
      const identity = await authenticateApiKey(db, key);
      // Unknown keys are not remembered: a key created a moment ago must work at once.
      if (identity === undefined) return undefined;
      const frozen = Object.freeze(identity);
      if (listening && started === generation) setBounded(keys, hash, frozen, maxKeys);
      return frozen;
    },

    getVersion: cachedVersion,

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
      const refKey = 'id' in ref ? `id\0${ref.id}` : `name\0${ref.name}`;
      if (listening && secretMaxAgeMs > 0) {
        const entry = secrets.get(namespace)?.get(refKey);
        if (entry !== undefined && entry.expires > now()) return { id: entry.id, name: entry.name, value: entry.value };
      }
      const started = generation;
      const secret = await readSecretValue(db, options.secretKey, namespace, ref);
      // A missing secret is not remembered: one created a moment ago must be used at once.
      if (secret !== undefined && listening && secretMaxAgeMs > 0 && started === generation) {
        const names = secrets.get(namespace) ?? new Map<string, SecretValue & { expires: number }>();
        secrets.set(namespace, names);
        names.set(refKey, { ...secret, expires: now() + secretMaxAgeMs });
      }
      return secret;
    },

    async changed(change) {
      forget(change);
      await listener?.settle();
    },

    async close() {
      listening = db.driver === 'pglite';
      await listener?.close();
      listener = undefined;
      forgetMutable();
    },
  };
}
