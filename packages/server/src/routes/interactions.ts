import type { Interaction } from '@maitento/lang';
import type { InteractionInput, InteractionRecord } from '@maitento/sdk';
import { getRunnable, runnableNotFound, type StoredRunnable } from '../resources/resource-reads.js';
import { runnableReads, versionedRoutes } from '../resources/versioned-routes.js';
import type { Api } from '../schemas/shared.js';
import type { ServerContext } from '../server/context.js';

/** One input of an interaction as the API lists it. */
type InputView = InteractionInput;

function defined<T extends Record<string, unknown>>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/** Every input a run of `interaction` may give, in declared order: prompts, then bindings, then auth inputs. */
export function interactionInputs(interaction: Interaction): InputView[] {
  const { prompts, functions } = interaction.inputs;
  return [
    ...prompts.map((p) =>
      defined({
        name: p.name,
        kind: 'prompt' as const,
        required: p.required,
        description: p.description,
        default: p.default,
      }),
    ),
    ...functions.binding.map((b) =>
      defined({
        name: b.name,
        kind: 'binding' as const,
        required: b.required,
        description: b.description,
        default: b.default,
        function: b.function,
        agent: b.agent,
        target: b.target,
        type: b.type,
      }),
    ),
    ...functions.auth.map((a) =>
      defined({
        name: a.name,
        kind: 'auth' as const,
        required: a.required,
        description: a.description,
        function: a.function,
        agent: a.agent,
        header: a.header,
        secret: a.secret,
      }),
    ),
  ];
}

async function interactionDetail(
  db: ServerContext['db'],
  stored: StoredRunnable<Interaction>,
  namespace: string,
): Promise<InteractionRecord> {
  const resource = stored.resource;
  const agentPin = stored.pins.find((pin) => pin.kind === 'agent' && pin.name === resource.agent.agent);
  const tools = new Map<string, { name: string; version: number }>();
  if (agentPin) {
    const agent = await getRunnable(db, namespace, 'agent', agentPin.name, agentPin.version);
    for (const pin of agent.pins)
      if (pin.kind === 'tool') tools.set(pin.name, { name: pin.name, version: pin.version });
  }
  for (const fn of resource.functions.openApi) {
    const pin = stored.pins.find((p) => p.kind === 'tool' && p.name === fn.ref);
    if (pin) tools.set(pin.name, { name: pin.name, version: pin.version });
  }
  return {
    name: stored.name,
    version: stored.version,
    enabled: stored.enabled,
    createdAt: stored.createdAt,
    hash: stored.hash,
    agent: { name: resource.agent.name, agent: resource.agent.agent, version: agentPin?.version ?? 0 },
    task: resource.task,
    inputs: interactionInputs(resource),
    tools: [...tools.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
    resource,
  };
}

/** `/v1/interactions`: read interaction versions with their inputs, agent and tools. */
export async function interactionRoutes(app: Api, ctx: ServerContext): Promise<void> {
  versionedRoutes(app, ctx, {
    noun: 'Interaction',
    one: 'interaction',
    many: 'interactions',
    notFound: 'api:interactions:not-found',
    list: { example: [{ name: 'support', latestVersion: 2, enabled: true }] },
    deletes: { kind: 'interaction', notFoundError: runnableNotFound('interaction') },
    reads: runnableReads(ctx.db, 'interaction'),
    path: '/interactions',
    tag: 'interactions',
    detailSchema: { $ref: 'InteractionRecord#' },
    detail: (stored, namespace) => interactionDetail(ctx.db, stored, namespace),
  });
}
