import type {
  Agent,
  AuthProvider,
  Connector,
  Interaction,
  Resource,
  ResourceKind,
  Schedule,
  Tool,
  Trigger,
  ToolDefinition,
} from '@maitento/lang';
import type * as wire from '@maitento/sdk/wire';
import type { Db, Queryable } from '../db/db.js';
import { type AuditContext, recordAudit } from '../audit/audit.js';
import { storeErrors } from '../errors.js';
import { activePins, DEPLOY_LOCK_CLASS, markDeleted } from '../resources/delete.js';
import { contentHash, type Pin } from '../resources/hash.js';
import { DELETED_HASH } from '../resources/versions.js';
import { notifyWake, wakeTopics } from '../wake/notify.js';
import { describeChange, type PreviousVersion } from './describe.js';
import { referencesOf } from './references.js';

/** What a deploy stores: the compiled resources of a repo and the tools' model-facing definitions. */
export interface CompiledResources {
  /** Absent: the deploy changes no auth provider (a caller from before they existed). */
  authProviders?: AuthProvider[];
  /** Absent: the deploy changes no schedule (a caller from before they existed). */
  schedules?: Schedule[];
  /** Absent: the deploy changes no trigger. */
  triggers?: Trigger[];
  connectors: Connector[];
  tools: Tool[];
  agents: Agent[];
  interactions: Interaction[];
  /** Tool name → the definition a model is sent. */
  definitions: Map<string, ToolDefinition>;
}

/** One resource of a deploy plan. */
export type DeployChange = wire.DeployChange;

/** What a deploy did, or would do. */
export type DeployPlan = wire.DeployPlan;

const KINDS: ResourceKind[] = ['auth-provider', 'connector', 'tool', 'agent', 'interaction', 'schedule', 'trigger'];

interface NewRow {
  kind: ResourceKind;
  name: string;
  version: number;
  hash: string;
  resource: Resource;
  pins: Pin[];
  definition: ToolDefinition | null;
}

// PostgreSQL jsonb cannot hold U+0000 or a lone UTF-16 surrogate (JSON allows both as escapes);
// refusing them up front keeps a dry run and a deploy in agreement instead of failing on the insert.
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function unstorable(value: unknown): boolean {
  if (typeof value === 'string') return UNSTORABLE.test(value);
  if (Array.isArray(value)) return value.some(unstorable);
  if (typeof value === 'object' && value !== null) {
    return Object.entries(value).some(([key, member]) => UNSTORABLE.test(key) || unstorable(member));
  }
  return false;
}

async function previousVersions(
  tx: Queryable,
  namespace: string,
  wanted: { kind: ResourceKind; name: string; version: number }[],
): Promise<Map<string, PreviousVersion>> {
  if (wanted.length === 0) return new Map();
  const { rows } = await tx.query<{ kind: string; name: string } & PreviousVersion>(
    'SELECT v.kind, v.name, v.resource, v.pins, v.definition FROM mt_resource_versions v ' +
      'JOIN jsonb_to_recordset($2::jsonb) AS w(kind text, name text, version int) ' +
      'ON v.kind = w.kind AND v.name = w.name AND v.version = w.version WHERE v.namespace = $1',
    [namespace, JSON.stringify(wanted)],
  );
  return new Map(rows.map((row) => [`${row.kind}:${row.name}`, row]));
}

// By name, except that an agent comes after the agents it hands tasks to (their new versions are its pins); the
// compiler refused cycles, and a name seen twice (a cycle after all) is simply not waited for.
function inDependencyOrder(resources: Resource[]): Resource[] {
  const sorted = [...resources].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const byName = new Map(sorted.map((r) => [r.name, r]));
  const out: Resource[] = [];
  const seen = new Set<string>();
  const visit = (resource: Resource) => {
    if (seen.has(resource.name)) return;
    seen.add(resource.name);
    for (const ref of referencesOf(resource)) {
      const dependency = ref.kind === resource.kind ? byName.get(ref.name) : undefined;
      if (dependency !== undefined) visit(dependency);
    }
    out.push(resource);
  };
  for (const resource of sorted) visit(resource);
  return out;
}

/**
 * Deploys compiled resources to `namespace` in one transaction, serialised with other deploys to it:
 * a new version for each resource whose content hash (resource and pinned versions) changed, none for
 * the rest. With `dryRun` it computes the same plan and writes nothing. Resources absent from
 * `compiled` are left as they are and listed in the plan's `absent`; with `prune` they are deleted in the same
 * transaction instead (decision 0295): each a `delete` change, hidden and disabled but for the versions that runs
 * not yet ended pin (`pinnedBy`), which stay until those runs end. A kind `compiled` leaves undefined is not pruned.
 */
export async function deploy(
  db: Db,
  namespace: string,
  compiled: CompiledResources,
  options: {
    dryRun?: boolean;
    /** Runs last in the deploy's transaction with its plan (a keyed request binds its answer there: decision 0102). */
    onPlanned?: (tx: Queryable, plan: DeployPlan) => Promise<void>;
    /** Who deploys: each new version records its key (`deployed_by`), and the deploy is one `deploy.applied` row. */
    audit?: AuditContext;
    /** Delete the namespace's resources that `compiled` does not hold (of the kinds it gives). */
    prune?: boolean;
  } = {},
): Promise<DeployPlan> {
  const dryRun = options.dryRun ?? false;
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [DEPLOY_LOCK_CLASS, namespace]);
    // One query compares every hash: the latest version of each resource of the namespace.
    const { rows: latestRows } = await tx.query<{ kind: ResourceKind; name: string; version: number; hash: string }>(
      'SELECT DISTINCT ON (kind, name) kind, name, version, hash FROM mt_resource_versions ' +
        'WHERE namespace = $1 ORDER BY kind, name, version DESC',
      [namespace],
    );
    const latest = new Map(latestRows.map((row) => [`${row.kind}:${row.name}`, row]));
    // A deleted resource (its latest row the marker) is no reference target; a new version numbers on after it.
    const versions = new Map(
      [...latest].filter(([, row]) => row.hash !== DELETED_HASH).map(([key, row]) => [key, row.version]),
    );
    const byKind: Record<ResourceKind, Resource[]> = {
      'auth-provider': compiled.authProviders ?? [],
      connector: compiled.connectors,
      tool: compiled.tools,
      agent: compiled.agents,
      interaction: compiled.interactions,
      schedule: compiled.schedules ?? [],
      trigger: compiled.triggers ?? [],
    };
    const changes: DeployChange[] = [];
    const inserts: NewRow[] = [];
    // With `prune`, what the deploy does not hold goes: a reference to it is a reference to nothing.
    const held = new Set(KINDS.flatMap((kind) => byKind[kind].map((resource) => `${kind}:${resource.name}`)));
    // Kinds in dependency order, so a resource's references already have their new versions.
    for (const kind of KINDS) {
      for (const resource of inDependencyOrder(byKind[kind])) {
        const pins: Pin[] = referencesOf(resource).map((ref) => {
          const version = versions.get(`${ref.kind}:${ref.name}`);
          if (version === undefined || (options.prune === true && !held.has(`${ref.kind}:${ref.name}`))) {
            throw storeErrors.create('api:deploy:reference-missing', {
              kind,
              name: resource.name,
              refKind: ref.kind,
              refName: ref.name,
            });
          }
          return { kind: ref.kind, name: ref.name, version };
        });
        if (unstorable(resource)) {
          throw storeErrors.create('api:deploy:unstorable-text', { kind, name: JSON.stringify(resource.name) });
        }
        const key = `${kind}:${resource.name}`;
        const hash = contentHash(resource, pins);
        const stored = latest.get(key);
        const current = stored?.hash === DELETED_HASH ? undefined : stored;
        if (current?.hash === hash) {
          changes.push({ kind, name: resource.name, action: 'unchanged', version: current.version, breaking: [] });
          continue;
        }
        const version = (stored?.version ?? 0) + 1;
        versions.set(key, version);
        const definition = kind === 'tool' ? (compiled.definitions.get(resource.name) ?? null) : null;
        inserts.push({ kind, name: resource.name, version, hash, resource, pins, definition });
        changes.push({
          kind,
          name: resource.name,
          action: current ? 'update' : 'create',
          version,
          ...(current ? { previousVersion: current.version } : {}),
          breaking: [],
        });
      }
    }
    await describeUpdates(tx, namespace, changes, inserts);
    // What the namespace holds that the deploy does not: deleted with `prune`, else only named in the plan.
    const given = new Set<string>(['connector', 'tool', 'agent', 'interaction']);
    if (compiled.authProviders !== undefined) given.add('auth-provider');
    if (compiled.schedules !== undefined) given.add('schedule');
    if (compiled.triggers !== undefined) given.add('trigger');
    const deployed = new Set(changes.map((change) => `${change.kind}:${change.name}`));
    const gone = latestRows.filter(
      (row) => row.hash !== DELETED_HASH && given.has(row.kind) && !deployed.has(`${row.kind}:${row.name}`),
    );
    const prune = options.prune === true;
    const absent: NonNullable<DeployPlan['absent']> = [];
    const deletions: { kind: ResourceKind; name: string; latest: number; keep: Set<number> }[] = [];
    if (prune) {
      const pins = await activePins(tx, namespace, gone);
      for (const row of gone) {
        const pinned = pins.get(`${row.kind}:${row.name}`);
        deletions.push({ kind: row.kind, name: row.name, latest: row.version, keep: pinned?.versions ?? new Set() });
        changes.push({
          kind: row.kind,
          name: row.name,
          action: 'delete',
          version: row.version,
          breaking: [],
          ...(pinned === undefined ? {} : { pinnedBy: pinned.runs }),
        });
      }
    } else {
      for (const row of gone) absent.push({ kind: row.kind, name: row.name, version: row.version });
    }
    if (!dryRun) {
      const deployedBy = options.audit?.actor.kind === 'key' ? options.audit.actor.keyId : null;
      for (const kind of KINDS)
        await insertVersions(
          tx,
          namespace,
          inserts.filter((row) => row.kind === kind),
          deployedBy,
        );
      await markDeleted(tx, namespace, deletions, deployedBy);
      // A deploy that changed something is one row: every version it created or deleted. One that changed nothing has none.
      if (options.audit !== undefined && (inserts.length > 0 || deletions.length > 0)) {
        await recordAudit(tx, {
          ...options.audit,
          namespace,
          action: 'deploy.applied',
          target: { kind: 'namespace', id: namespace },
          after: {
            versions: changes
              .filter((change) => change.action !== 'unchanged')
              .map((change) => ({
                kind: change.kind,
                name: change.name,
                version: change.version,
                action: change.action,
                ...(change.previousVersion === undefined ? {} : { previousVersion: change.previousVersion }),
              })),
          },
        });
      }
      // The inserts step the cache epoch (schema 7): every server forgets which version is latest.
      // Open MCP sessions of the namespace are told tools/list_changed.
      if (inserts.length > 0) await notifyWake(tx, wakeTopics.resources(namespace));
      // A new version of a schedule (or of the interaction one pins): every process's scheduler reads them again.
      if (inserts.some((row) => row.kind === 'schedule')) await notifyWake(tx, wakeTopics.schedules);
    }
    const plan: DeployPlan = { applied: !dryRun, changes, ...(absent.length > 0 ? { absent } : {}) };
    await options.onPlanned?.(tx, plan);
    return plan;
  });
}

async function describeUpdates(tx: Queryable, namespace: string, changes: DeployChange[], inserts: NewRow[]) {
  const updates = changes.filter((change) => change.action === 'update');
  const previous = await previousVersions(
    tx,
    namespace,
    updates.map((change) => ({ kind: change.kind, name: change.name, version: change.previousVersion! })),
  );
  const rows = new Map(inserts.map((row) => [`${row.kind}:${row.name}`, row]));
  for (const change of updates) {
    const key = `${change.kind}:${change.name}`;
    const row = rows.get(key)!;
    const summary = describeChange(previous.get(key)!, {
      resource: row.resource,
      pins: row.pins,
      definition: row.definition ?? undefined,
    });
    change.changed = summary.changed;
    change.breaking = summary.breaking;
  }
}

// One statement per kind: a deploy of a thousand resources is seven inserts.
async function insertVersions(
  tx: Queryable,
  namespace: string,
  rows: NewRow[],
  deployedBy: string | null,
): Promise<void> {
  if (rows.length === 0) return;
  await tx.query(
    'INSERT INTO mt_resource_versions (namespace, kind, name, version, hash, resource, pins, definition, deployed_by) ' +
      'SELECT $1, r.kind, r.name, r.version, r.hash, r.resource, r.pins, r.definition, $3 ' +
      // json, not jsonb: jsonb would sort the keys of every resource, and their order is what a model reads.
      'FROM json_to_recordset($2::json) AS r(kind text, name text, version int, hash text, resource json, ' +
      'pins json, definition json)',
    [namespace, JSON.stringify(rows), deployedBy],
  );
}

/** Computes what a deploy of `compiled` would do, writing nothing. */
export function planDeploy(db: Db, namespace: string, compiled: CompiledResources): Promise<DeployPlan> {
  return deploy(db, namespace, compiled, { dryRun: true });
}

/** Deploys `compiled` and returns what it did. */
export function applyDeploy(db: Db, namespace: string, compiled: CompiledResources): Promise<DeployPlan> {
  return deploy(db, namespace, compiled, { dryRun: false });
}
