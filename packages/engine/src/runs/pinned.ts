import { BoundedMap } from '@maitento/egress';
import type { Agent, Connector, Interaction, InteractionAgentTools, ResourceKind, Tool } from '@maitento/lang';
import { interactionTools } from '@maitento/lang';
import { getAnyVersion, type Queryable, type StoredVersion } from '@maitento/store';
import type { VersionRef } from '../api/types.js';
import { engineErrors } from '../errors.js';
import { type CallReads, findVersion } from './call-reads.js';

/** Every version a run uses, loaded. */
export interface PinnedSet {
  interaction: StoredVersion<Interaction>;
  agent: StoredVersion<Agent>;
  tools: Map<string, StoredVersion<Tool>>;
  connectors: Map<string, StoredVersion<Connector>>;
  versions: VersionRef[];
  /** The model-facing tools of the interaction's agent, computed from these versions. */
  agentTools: InteractionAgentTools;
}

/**
 * Loads pinned versions through a bounded cache keyed by (namespace, kind, name, version): versions are
 * immutable, so the same objects come back and the gateway's plans (kept per object) are reused. Tools and
 * connectors are read through `reads` (the server's cache), so the server's calls and the engine's share the
 * same objects. `enabled` in a cached version is stale by design; it is read through `reads` before each call.
 */
export class PinnedLoader {
  readonly #versions = new BoundedMap<string, StoredVersion<unknown>>(2000);
  readonly #sets = new BoundedMap<string, PinnedSet>(500);

  constructor(
    private readonly db: Queryable,
    private readonly reads: CallReads,
  ) {}

  async version<R>(namespace: string, ref: VersionRef): Promise<StoredVersion<R> | undefined> {
    const key = `${namespace}\u0000${ref.kind}\u0000${ref.name}\u0000${ref.version}`;
    const cached = this.#versions.get(key);
    if (cached !== undefined) return cached as StoredVersion<R>;
    const loaded = (
      ref.kind === 'tool' || ref.kind === 'connector'
        ? await findVersion(this.reads, namespace, ref.kind, ref.name, ref.version)
        : await getAnyVersion<R>(this.db, namespace, ref.kind, ref.name, ref.version)
    ) as StoredVersion<R> | undefined;
    if (loaded !== undefined) this.#versions.set(key, loaded);
    return loaded;
  }

  /**
   * The latest (or given) version of an interaction, through `reads` (the server's cache: no statement while its
   * lease holds, and fresh after any deploy or enable); undefined when there is none.
   */
  async interaction(namespace: string, name: string, version?: number) {
    await this.reads.sync();
    // A deleted interaction has no latest version, and no run starts on any of its versions (decision 0295).
    if (version !== undefined && (await this.reads.findVersion(namespace, 'interaction', name)) === undefined) {
      return undefined;
    }
    return this.reads.findVersion<Interaction>(namespace, 'interaction', name, version);
  }

  /**
   * Follows the pins of an interaction version: its agent, the agents it hands tasks to (and theirs), its and
   * every such agent's tools, their connectors.
   */
  async resolve(namespace: string, interaction: StoredVersion<Interaction>): Promise<VersionRef[]> {
    const refs: VersionRef[] = [{ kind: 'interaction', name: interaction.name, version: interaction.version }];
    const seen = new Set<string>();
    const add = (ref: VersionRef) => {
      const key = `${ref.kind}:${ref.name}`;
      if (seen.has(key)) return false;
      seen.add(key);
      refs.push({ kind: ref.kind, name: ref.name, version: ref.version });
      return true;
    };
    const need = async <R>(kind: ResourceKind, pin: VersionRef, from: string) => {
      const found = await this.version<R>(namespace, pin);
      if (found === undefined) {
        throw engineErrors.create('api:interactions:pin-missing', {
          name: from,
          version: interaction.version,
          kind,
          pin: pin.name,
          pinVersion: pin.version,
        });
      }
      return found;
    };
    const toolPins: VersionRef[] = [];
    const agentPins: VersionRef[] = [];
    for (const pin of interaction.pins) {
      if (pin.kind === 'agent') agentPins.push(pin);
      if (pin.kind === 'tool') toolPins.unshift(pin);
    }
    // An agent's pins of agents (those it hands tasks to) are followed too; cycles are refused at deploy, `add` stops them anyway.
    for (let i = 0; i < agentPins.length; i++) {
      const pin = agentPins[i]!;
      if (!add(pin)) continue;
      const agent = await need<Agent>('agent', pin, interaction.name);
      for (const p of agent.pins) {
        if (p.kind === 'tool') toolPins.push(p);
        if (p.kind === 'agent') agentPins.push(p);
      }
    }
    for (const pin of toolPins) {
      if (!add(pin)) continue;
      const tool = await need<Tool>('tool', pin, interaction.name);
      for (const p of tool.pins) if (p.kind === 'connector') add(p);
    }
    return refs;
  }

  /**
   * Loads every version of `refs` (a run's pinned list) and the tools of the agent the run plays (the interaction's,
   * or `subAgent` for a child run), cached per run shape.
   */
  async load(namespace: string, refs: VersionRef[], subAgent?: string): Promise<PinnedSet> {
    const key = `${namespace}\u0000${subAgent ?? ''}\u0000${refs.map((r) => `${r.kind}:${r.name}:${r.version}`).join(',')}`;
    const cached = this.#sets.get(key);
    if (cached !== undefined) return cached;
    const tools = new Map<string, StoredVersion<Tool>>();
    const connectors = new Map<string, StoredVersion<Connector>>();
    let interaction: StoredVersion<Interaction> | undefined;
    const agents = new Map<string, StoredVersion<Agent>>();
    for (const ref of refs) {
      const loaded = await this.version(namespace, ref);
      if (loaded === undefined) {
        throw engineErrors.create('api:interactions:pin-missing', {
          name: refs[0]?.name ?? '',
          version: refs[0]?.version ?? 0,
          kind: ref.kind,
          pin: ref.name,
          pinVersion: ref.version,
        });
      }
      if (ref.kind === 'interaction') interaction = loaded as StoredVersion<Interaction>;
      else if (ref.kind === 'agent') agents.set(ref.name, loaded as StoredVersion<Agent>);
      else if (ref.kind === 'tool') tools.set(ref.name, loaded as StoredVersion<Tool>);
      else connectors.set(ref.name, loaded as StoredVersion<Connector>);
    }
    const agent = interaction && agents.get(subAgent ?? interaction.resource.agent.agent);
    if (interaction === undefined || agent === undefined) throw new Error('a run pins no interaction or no agent');
    const [agentTools] = interactionTools(
      interaction.resource,
      {
        tools: [...tools.values()].map((t) => t.resource),
        connectors: [...connectors.values()].map((c) => c.resource),
        agents: [...agents.values()].map((a) => a.resource),
      },
      subAgent,
    );
    const set: PinnedSet = { interaction, agent, tools, connectors, versions: refs, agentTools: agentTools! };
    this.#sets.set(key, set);
    return set;
  }
}
