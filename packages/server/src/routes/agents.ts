import type { AgentRecord } from '@maitento/sdk';
import { runnableNotFound } from '../resources/resource-reads.js';
import { runnableReads, versionedRoutes } from '../resources/versioned-routes.js';
import type { Api } from '../schemas/shared.js';
import type { ServerContext } from '../server/context.js';

/** `/v1/agents`: read agent versions (model, instructions, the tool versions each pins). */
export async function agentRoutes(app: Api, ctx: ServerContext): Promise<void> {
  versionedRoutes(app, ctx, {
    noun: 'Agent',
    one: 'agent',
    many: 'agents',
    notFound: 'api:agents:not-found',
    list: { example: [{ name: 'support-agent', latestVersion: 1, enabled: true }] },
    deletes: { kind: 'agent', notFoundError: runnableNotFound('agent') },
    reads: runnableReads(ctx.db, 'agent'),
    path: '/agents',
    tag: 'agents',
    detailSchema: { $ref: 'AgentRecord#' },
    detail: async (stored): Promise<AgentRecord> => ({
      name: stored.name,
      version: stored.version,
      enabled: stored.enabled,
      createdAt: stored.createdAt,
      hash: stored.hash,
      model: stored.resource.model,
      ...(stored.resource.summary === undefined ? {} : { summary: stored.resource.summary }),
      instructions: stored.resource.instructions,
      tools: stored.pins.filter((pin) => pin.kind === 'tool').map(({ name, version }) => ({ name, version })),
      resource: stored.resource,
    }),
  });
}
