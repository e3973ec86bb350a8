import { callInputOf, gatewayErrors } from '@maitento/gateway';
import type { ExtopRecord, Tool } from '@maitento/sdk';
import { ExtopCallBodySchema, NameParamsSchema } from '@maitento/sdk';
import { listTools, type StoredVersion } from '@maitento/store';
import { cacheSecrets } from '../calls/tool-credential.js';
import { tracedCall } from '../calls/traced-call.js';
import { serverErrors } from '../errors.js';
import { SCHEMA_EXAMPLES } from '../openapi/examples.js';
import { operation } from '../openapi/operation.js';
import { storeReads, versionedRoutes } from '../resources/versioned-routes.js';
import type { Api } from '../schemas/shared.js';
import type { ServerContext } from '../server/context.js';

// Deploy stores every tool version with the connector version it pins.
function connectorPin(stored: StoredVersion): ExtopRecord['connector'] {
  const pin = stored.pins.find((p) => p.kind === 'connector');
  if (!pin) throw serverErrors.create('api:server:internal');
  return { name: pin.name, version: pin.version };
}

/** `/v1/extops`: read tool versions, disable and enable them, and make one call through the gateway. */
export async function extopRoutes(app: Api, ctx: ServerContext): Promise<void> {
  versionedRoutes(app, ctx, {
    noun: 'Extop',
    one: 'tool',
    many: 'tools',
    notFound: 'api:extops:not-found',
    list: {
      description:
        "Lists the tools of the key's namespace by name, each with its latest version, whether it is enabled, and " +
        'whether it can be called now (and if not, why).',
      ok: 'The tools, by name',
      example: [SCHEMA_EXAMPLES.ExtopSummary],
    },
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

  app.post(
    '/extops/:name/call',
    {
      config: { role: 'admin' },
      schema: operation({
        operationId: 'callExtop',
        tags: ['extops'],
        summary: 'Make one call of the tool through the gateway, with the namespace secrets',
        description:
          'Makes one call of the tool (its latest enabled version, or the one named) through the gateway, with the ' +
          "namespace's secrets, as an agent would (admin key). A tool that needs a person's approval is not called " +
          'this way. The endpoint answering an error is a result with ok false; a call that could not be made is an error.',
        params: NameParamsSchema,
        body: ExtopCallBodySchema,
        response: { 200: { $ref: 'ExtopCallResult#' } },
        ok: "The call's result: the endpoint's status and body, or why the call failed",
        errors: [
          'api:extops:not-found',
          'api:extops:version-disabled',
          'api:connectors:version-disabled',
          'api:approvals:required',
          'api:gateway:arguments-invalid',
          'api:gateway:argument-unknown',
          'api:gateway:argument-bound',
          'api:gateway:request-invalid',
          'api:gateway:path-invalid',
          'api:gateway:secret-not-found',
          'api:connectors:secret-missing',
          'api:connectors:address-blocked',
          'api:egress:name-not-resolved',
          'api:gateway:upstream-unreachable',
          'api:gateway:timeout',
        ],
        examples: { body: { arguments: { orderId: 'A-1042' } } },
      }),
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
