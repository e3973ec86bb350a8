import type { Connector, Tool } from '@maitento/lang';
import type { Queryable } from '../db/db.js';
import { storeErrors } from '../errors.js';
import { getVersion, type StoredVersion } from './versions.js';

/** A tool version and the connector version it is pinned to, both enabled. */
export interface CallableTool {
  tool: StoredVersion<Tool>;
  connector: StoredVersion<Connector>;
}

/**
 * Loads a tool version (latest by default) and its pinned connector version for one call, refusing a
 * disabled tool version (`api:extops:version-disabled`) or connector version (`api:connectors:version-disabled`).
 */
export async function loadCallableTool(
  db: Queryable,
  namespace: string,
  name: string,
  version?: number,
): Promise<CallableTool> {
  const tool = await getVersion(db, namespace, 'tool', name, version);
  if (!tool.enabled) throw storeErrors.create('api:extops:version-disabled', { name, version: tool.version });
  const pin = tool.pins.find((p) => p.kind === 'connector');
  const connector = await getVersion(db, namespace, 'connector', pin?.name ?? tool.resource.connector, pin?.version);
  if (!connector.enabled) {
    throw storeErrors.create('api:connectors:version-disabled', { name: connector.name, version: connector.version });
  }
  return { tool, connector };
}
