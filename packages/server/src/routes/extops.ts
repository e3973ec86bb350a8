import { callInputOf, gatewayErrors } from '@maitento/gateway';
import { listTools, type StoredVersion } from '@maitento/store';
import type { ExtopRecord, OperationRequest, Tool } from '@maitento/sdk';
import type { FastifyInstance } from 'fastify';
import { serverErrors } from '../errors.js';
import type { ServerContext } from '../server/context.js';
import { cacheSecrets } from '../calls/tool-credential.js';
import { tracedCall } from '../calls/traced-call.js';
import { storeReads, versionedRoutes } from '../resources/versioned-routes.js';
import { operation, responses } from '../schemas/shared.js';

// Deploy stores every tool version with the connector version it pins.
function connectorPin(stored: StoredVersion): ExtopRecord['connector'] {
  const pin = stored.pins.find((p) => p.kind === 'connector');
  if (!pin) throw serverErrors.create('api:server:internal');
  return { name: pin.name, version: pin.version };
}

/** `/v1/extops`: read tool versions, disable and enable them, and make one call through the gateway. */
export async function extopRoutes(app: FastifyInstance, ctx: ServerContext): Promise<void> {
  versionedRoutes(app, ctx, {
    noun: 'Extop',
    reads: { ...storeReads(ctx.db, 'tool'), list: (namespace) => listTools(ctx.db, namespace) },
    toggles: 'tool',
    path: '/extops',
    tag: 'extops',
    detailSchema: { $ref: 'ExtopRecord#' },
    listItem: { $ref: 'ExtopSummary#' },
    detail: (stored): ExtopRecord => ({
      name: stored.name,
      version: stored.version,
      enabled: stored.enabled,
      createdAt: stored.createdAt,
      hash: stored.hash,
      connector: connectorPin(stored),
      resource: stored.resource as Tool,
      ...(stored.definition ? { definition: stored.definition } : {}),
    }),
  });

  app.post<OperationRequest<'callExtop'>>(
    '/extops/:name/call',
    {
      config: { role: 'admin' },
      schema: {
        ...operation('callExtop'),
        tags: ['extops'],
        summary: 'Make one call of the tool through the gateway, with the namespace secrets',
        response: responses({ 200: { $ref: 'ExtopCallResult#' } }),
      },
    },
    async (request) => {
      const namespace = request.identity.namespace;
      const { tool, connector } = await ctx.cache.loadCallableTool(
        namespace,
        request.params.name,
        request.body.version,
      );
      // A tool that needs a person's approval is called only from a run, where one approves (docs/product.md §6).
      if (tool.resource.requiresApproval) {
        throw gatewayErrors.create('api:approvals:required', { tool: tool.resource.name });
      }
      // A client that retries a call sends the same Idempotency-Key; the gateway derives the upstream's key
      // from it, so the upstream can tell the retry from a new call.
      const clientKey = request.headers['idempotency-key'];
      const input = await callInputOf({
        tool: tool.resource,
        connector: connector.resource,
        arguments: request.body.arguments,
        readSecret: cacheSecrets(ctx.cache, namespace),
        caller: namespace,
        ...(typeof clientKey === 'string' && clientKey !== ''
          ? { idempotencyKey: `${namespace}:${tool.resource.name}:${clientKey}` }
          : {}),
      });
      const result = await tracedCall(ctx, { tool, connector }, input, (i) => ctx.gateway.call(i), {
        traceparent: typeof request.headers.traceparent === 'string' ? request.headers.traceparent : undefined,
        arguments: request.body.arguments,
      });
      // Response headers stay out: a model never sees them either (toolResultText), and they may set cookies.
      return {
        ok: result.ok,
        status: result.status,
        body: result.body,
        truncated: result.truncated,
        error: result.error,
        code: result.code,
      };
    },
  );
}
