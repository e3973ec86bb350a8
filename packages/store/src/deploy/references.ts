import type { Agent, Interaction, Resource, ResourceKind } from '@maitento/lang';

/** A resource this one references, before it is pinned to a version. */
export interface Reference {
  kind: ResourceKind;
  name: string;
}

function interactionReferences(interaction: Interaction): Reference[] {
  const refs: Reference[] = [{ kind: 'agent', name: interaction.agent.agent }];
  for (const fn of interaction.functions.openApi) refs.push({ kind: 'tool', name: fn.ref });
  for (const input of [...interaction.inputs.functions.binding, ...interaction.inputs.functions.auth]) {
    refs.push({ kind: 'tool', name: input.function });
    if (input.agent !== undefined) refs.push({ kind: 'agent', name: input.agent });
  }
  return refs;
}

function agentReferences(agent: Agent): Reference[] {
  return agent.functions.map((fn) =>
    'ref' in fn ? { kind: 'tool' as const, name: fn.ref } : { kind: 'agent' as const, name: fn.agent },
  );
}

/** The resources `resource` references (secrets excluded: they are looked up by name at call time), deduplicated and sorted. */
export function referencesOf(resource: Resource): Reference[] {
  let refs: Reference[];
  switch (resource.kind) {
    case 'auth-provider':
      refs = [];
      break;
    case 'connector':
      // An OAuth2 connector pins its auth provider's version: a new provider version makes a new connector version.
      refs = resource.provider === undefined ? [] : [{ kind: 'auth-provider', name: resource.provider }];
      break;
    case 'tool':
      refs = [{ kind: 'connector', name: resource.connector }];
      break;
    case 'agent':
      refs = agentReferences(resource);
      break;
    case 'interaction':
      refs = interactionReferences(resource);
      break;
    case 'schedule':
    case 'trigger':
      // The interaction version a tick starts is the one pinned at deploy.
      refs = [{ kind: 'interaction', name: resource.interaction }];
      break;
  }
  const unique = new Map(refs.map((ref) => [`${ref.kind}:${ref.name}`, ref]));
  return [...unique.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, ref]) => ref);
}
