import { isMtError } from '@maitento/errors';
import {
  createStoreCache,
  type Db,
  type SecretKeys,
  type StoreCache,
  type StoredVersion,
  type VersionedKind,
} from '@maitento/store';

/**
 * What a tool call reads: the pinned tool and connector versions (their `enabled` flag), the credential and whether
 * the key whose authority it uses is still there. The
 * server's {@link StoreCache} fits, so the engine and the server's own calls share one cache and one gateway plan
 * per version.
 */
export type CallReads = Pick<
  StoreCache,
  'sync' | 'observe' | 'getVersion' | 'findVersion' | 'readSecretValue' | 'apiKeyExists'
>;

/**
 * The reads of an engine: `given` (the server's cache), else a cache of its own (closed with the engine), which
 * reads the database's cache epoch before each call's reads, so it sees every change committed before (no lease:
 * only the server's and the worker's caches are members of the cache lease).
 */
export async function openCallReads(
  db: Db,
  secretKey: SecretKeys,
  given: CallReads | undefined,
): Promise<{ reads: CallReads; close(): Promise<void> }> {
  if (given !== undefined) return { reads: given, close: async () => {} };
  const cache = await createStoreCache(db, { secretKey });
  return { reads: cache, close: () => cache.close() };
}

/** The stored version, or undefined when there is none (not found is an answer here, not an error). */
export async function findVersion(
  reads: CallReads,
  namespace: string,
  kind: VersionedKind,
  name: string,
  version: number,
): Promise<StoredVersion<unknown> | undefined> {
  try {
    return await reads.getVersion(namespace, kind, name, version);
  } catch (error) {
    if (isMtError(error) && error.code.endsWith(':not-found')) return undefined;
    throw error;
  }
}
