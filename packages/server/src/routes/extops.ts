import { type CallCredential, callInputOf, gatewayErrors } from '@maitento/gateway';
import type { ExtopRecord, Tool } from '@maitento/sdk';
import { ExtopCallBodySchema, NameParamsSchema } from '@maitento/sdk';
import { listTools, type StoredVersion, storeErrors, versionNotFound } from '@maitento/store';
import { connectionForCall } from '../calls/connection-for-call.js';
import { limitRefusal } from '../calls/limit-refusal.js';
import { auditContext } from '../http/actor.js';
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
    deletes: { kind: 'tool', notFoundError: versionNotFound('tool') },
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
          'this way. The endpoint answering an error is a result with ok false; a call that could not be made is an error. ' +
          'A tool whose connector has auth = "OAuth2" acts for the endUser named (its connection\'s access token); when ' +
          'that person has no usable connection the answer is 409 api:connections:authorization-required with ' +
          '`authorization.url`, their connect link: they open it, then the call is made again.',
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
          'api:limits:exceeded',
          'api:connections:end-user-missing',
          'api:connections:authorization-required',
          'api:connections:provider-failed',
        ],
        examples: { body: { arguments: { orderId: 'A-1042' } } },
      }),
    },
    async (request, reply) => {
      const namespace = request.identity.namespace;
      // A version named of a deleted tool is not called by hand (decision 0295): its latest is gone.
      if (request.body.version !== undefined) {
        if ((await ctx.cache.findVersion(namespace, 'tool', request.params.name)) === undefined) {
          const params = { name: request.params.name, version: '', suggestion: '' };
          throw storeErrors.create('api:extops:not-found', params);
        }
      }
      const { tool, connector } = await ctx.cache.loadCallableTool(
        namespace,
        request.params.name,
        request.body.version,
      );
      // A tool that needs a person's approval is called only from a run, where one approves (docs/product.md §6).
      if (tool.resource.requiresApproval) {
        throw gatewayErrors.create('api:approvals:required', { tool: tool.resource.name });
      }
      // An OAuth2 connector acts for the end user the body names (a client credentials one for the client): their
      // connection is read once, before anything is sent. Without a usable one the call is refused with a connect
      // link for them (no run exists to wait; decision 0335).
      let credential: CallCredential | undefined;
      if (connector.resource.auth === 'OAuth2') {
        const endUser = request.body.endUser ?? null;
        if (endUser === null && connector.resource.grant !== 'client_credentials') {
          throw gatewayErrors.create('api:connections:end-user-missing', {
            tool: tool.resource.name,
            connector: connector.name,
          });
        }
        const found = await connectionForCall(ctx, namespace, { tool, connector }, endUser, {
          createdBy: request.identity.keyId,
          audit: auditContext(request),
        });
        if ('refused' in found) throw found.refused;
        credential = found.credential;
      }
      // A client that retries a call sends the same Idempotency-Key; the gateway derives the upstream's key
      // from it, so the upstream can tell the retry from a new call.
      const clientKey = request.headers['idempotency-key'];
      const input = await callInputOf({
        tool: tool.resource,
        connector: connector.resource,
        arguments: request.body.arguments,
        readSecret: cacheSecrets(ctx.cache, namespace),
        connectionToken: async () => credential,
        caller: namespace,
        ...(typeof clientKey === 'string' && clientKey !== ''
          ? { idempotencyKey: `${namespace}:${tool.resource.name}:${clientKey}` }
          : {}),
      }).then((made) => ({ ...made, keyId: request.identity.keyId }));
      const result = await tracedCall(ctx, { tool, connector }, input, (i) => ctx.gateway.call(i), {
        traceparent: typeof request.headers.traceparent === 'string' ? request.headers.traceparent : undefined,
        arguments: request.body.arguments,
      });
      // Over the tool's limit: 429 with when to try again (RFC 9110 Retry-After) and the IETF RateLimit fields.
      if (result.limited !== undefined) throw limitRefusal(reply, tool.resource.name, result.limited);
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
