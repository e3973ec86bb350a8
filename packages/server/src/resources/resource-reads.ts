import { engineErrors } from '@maitento/engine';
import {
  getVersion,
  listVersions,
  type NotFoundError,
  type Queryable,
  type ResourceOf,
  type StoredVersion,
  type VersionSummary,
} from '@maitento/store';
import { serverErrors } from '../errors.js';

/** The kinds read here (connectors and tools are read through the store's `getVersion`). */
export type RunnableKind = 'agent' | 'interaction';

/** One stored version of an agent or interaction. */
export type StoredRunnable<R> = Omit<StoredVersion<R>, 'definition'>;

/** The resource stored for each kind. */
export type RunnableOf<K extends RunnableKind> = ResourceOf<K>;

/** The not-found error of an agent or interaction (or one version of it). */
export function runnableNotFound(kind: RunnableKind): NotFoundError {
  return (name, version, suggestion) => {
    const params = { name, version: version === undefined ? '' : ` version ${version}`, suggestion };
    return kind === 'agent'
      ? serverErrors.create('api:agents:not-found', params)
      : engineErrors.create('api:interactions:not-found', params);
  };
}

/** Reads one version of an agent or interaction (the latest when `version` is omitted). */
export async function getRunnable<K extends RunnableKind>(
  db: Queryable,
  namespace: string,
  kind: K,
  name: string,
  version?: number,
): Promise<StoredRunnable<RunnableOf<K>>> {
  const { definition: _definition, ...runnable } = await getVersion(
    db,
    namespace,
    kind,
    name,
    version,
    runnableNotFound(kind),
  );
  return runnable;
}

/** Lists the versions of an agent or interaction, newest first. */
export function listRunnableVersions(
  db: Queryable,
  namespace: string,
  kind: RunnableKind,
  name: string,
): Promise<VersionSummary[]> {
  return listVersions(db, namespace, kind, name, runnableNotFound(kind));
}
