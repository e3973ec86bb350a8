import type { FastifyInstance } from 'fastify';
import type { ServerContext } from '../internal/context.js';
import { runnableRoutes } from '../internal/runnable-routes.js';
import { versionDetailProperties } from '../internal/versioned-routes.js';

/** `/v1/agents`: read agent versions (model, instructions, the tool versions each pins). */
export async function agentRoutes(app: FastifyInstance, ctx: ServerContext): Promise<void> {
  runnableRoutes(app, ctx, {
    noun: 'Agent',
    kind: 'agent',
    path: '/agents',
    tag: 'agents',
    detailSchema: {
      type: 'object',
      properties: {
        ...versionDetailProperties,
        model: { type: 'string' },
        summary: { type: 'string' },
        instructions: { type: 'string' },
        tools: { type: 'array', items: { $ref: 'ToolPin#' } },
        resource: { $ref: 'Agent#' },
      },
      required: ['name', 'version', 'enabled', 'createdAt', 'hash', 'model', 'instructions', 'tools', 'resource'],
    },
    detail: async (stored) => ({
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
