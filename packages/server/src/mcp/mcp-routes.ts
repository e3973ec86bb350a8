import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { serverErrors } from '../errors.js';
import { registerAuth } from '../plugins/auth.js';
import type { ServerContext } from '../server/context.js';
import { PerKeyLimit } from '../streams/per-key-limit.js';
import { watchToolChanges } from './list-changed.js';
import { limitedOf } from './call-tool.js';
import type { McpSession } from './session.js';
import type { McpSettings } from './settings.js';
import { loadAgent, type McpScope } from './tools.js';

type McpModules = {
  isInitializeRequest: typeof import('@modelcontextprotocol/sdk/types.js').isInitializeRequest;
  openSession: typeof import('./session.js').openSession;
  isPlainToolCall: typeof import('./session-transport.js').isPlainToolCall;
};
let mcpModules: McpModules | undefined;

// The MCP SDK (with zod and hono: ~0.2-0.4 s of CPU to load) is imported on the first request to /mcp, not when the
// server starts: most servers never get one. A request with a session comes after the one that opened it, so the
// modules are there by then.
async function loadMcp(): Promise<McpModules> {
  if (mcpModules !== undefined) return mcpModules;
  const [types, session, transport] = await Promise.all([
    import('@modelcontextprotocol/sdk/types.js'),
    import('./session.js'),
    import('./session-transport.js'),
  ]);
  mcpModules = {
    isInitializeRequest: types.isInitializeRequest,
    openSession: session.openSession,
    isPlainToolCall: transport.isPlainToolCall,
  };
  return mcpModules;
}

/**
 * `/mcp` (every tool of the key's namespace) and `/mcp/agents/{name}` (one agent's functions) over MCP's
 * Streamable HTTP transport, with the API keys of `/v1` (`Authorization: Bearer`). A session is bound to
 * the key and the endpoint that opened it, and ends when that key is deleted.
 */
export async function mcpRoutes(app: FastifyInstance, ctx: ServerContext, settings: McpSettings): Promise<void> {
  registerAuth(app, ctx);
  const sessions = new Map<string, McpSession>();
  const sessionsPerKey = new PerKeyLimit(settings.sessionsPerKey, (max) =>
    serverErrors.create('api:mcp:too-many-sessions', { max }),
  );
  // The serializer of a direct call's answer, already JSON text.
  const asIs = (payload: string) => payload;
  const onInternal = (err: unknown) => app.log.error({ err }, 'internal error in an MCP tool call');
  const watcher = watchToolChanges(ctx, settings, sessions, app.log);
  app.addHook('preClose', async () => {
    watcher.stop();
    await Promise.all([...sessions.values()].map((s) => s.close().catch(() => undefined)));
    sessions.clear();
  });

  const handle = async (request: FastifyRequest, reply: FastifyReply, agent?: string) => {
    const { isInitializeRequest, openSession, isPlainToolCall } = mcpModules ?? (await loadMcp());
    const { namespace, keyId } = request.identity;
    const endpoint = agent === undefined ? '/mcp' : `/mcp/agents/${agent}`;
    const header = request.headers['mcp-session-id'];
    let session: McpSession | undefined;
    // A new session's place under its key's limit, given back when it closes or if it never opens.
    let releaseUnopened: (() => void) | undefined;
    if (typeof header === 'string' && header !== '') {
      session = sessions.get(header);
      if (session === undefined || session.endpoint !== endpoint) {
        throw serverErrors.create('api:mcp:session-not-found', { id: header, endpoint });
      }
      if (session.keyId !== keyId || session.scope.namespace !== namespace) {
        throw serverErrors.create('api:mcp:session-key-mismatch', { id: header });
      }
    } else {
      if (request.method !== 'POST' || !isInitializeRequest(request.body)) {
        throw serverErrors.create('api:mcp:session-required');
      }
      const scope: McpScope = agent === undefined ? { namespace } : { namespace, agent };
      if (agent !== undefined) await loadAgent(ctx, namespace, agent);
      const release = sessionsPerKey.acquire(keyId);
      let opened = false;
      releaseUnopened = () => {
        if (!opened) release();
      };
      let unwatch = () => {};
      session = openSession(ctx, settings, scope, keyId, endpoint, {
        onOpened: (id, made) => {
          opened = true;
          sessions.set(id, made);
          watcher.baseline(namespace);
          // A deleted key's session ends at once (on every server), and with it the tasks waiting in it.
          unwatch = ctx.keys.watch(keyId, () => {
            sessions.delete(id);
            made.close().catch(() => undefined);
          });
        },
        onClosed: (id) => {
          unwatch();
          sessions.delete(id);
          release();
        },
        onInternal,
      });
    }
    try {
      if (releaseUnopened !== undefined) await session.server.connect(session.transport);
      session.lastUsed = Date.now();
      // A tools/call that needs no stream: answered as one JSON body, run directly when its tool needs no approval,
      // else by the session's Server (docs/mcp.md, docs/decisions/0032-mcp-plain-tools-call-answered-as-json.md).
      if (
        releaseUnopened === undefined &&
        request.method === 'POST' &&
        isPlainToolCall(request.body, request.headers)
      ) {
        const { transport } = session;
        const id = request.body.id;
        // A call cancelled by the client (notifications/cancelled) gets no response, as over SSE: its entry goes
        // when the client closes the request.
        const gone = () => {
          if (!reply.raw.writableEnded) transport.forget(id);
        };
        // `on` and `removeListener`, not `once` and `off`: no wrapper made and searched for a call.
        reply.raw.on('close', gone);
        const response = await session.callPlain(request.body, request.headers);
        reply.raw.removeListener('close', gone);
        if (response !== undefined) return sendPlain(reply, header, response);
      }
      // From here the SDK's transport writes the answer (JSON or an SSE stream) itself.
      reply.hijack();
      await session.transport.http.handleRequest(request.raw, reply.raw, request.body);
    } finally {
      releaseUnopened?.();
    }
  };

  // The answer of a plain call as one JSON body.
  const sendPlain = (reply: FastifyReply, header: string | string[] | undefined, response: JSONRPCMessage) => {
    // Over a limit: HTTP 429 with when to try again and the IETF RateLimit fields, as REST (docs/limits.md).
    const limited = limitedOf(response);
    if (limited !== undefined) {
      reply
        .code(429)
        .header('retry-after', String(limited.retryAfterSeconds))
        .header('ratelimit', limited.rateLimit)
        .header('ratelimit-policy', limited.rateLimitPolicy);
    }
    // `application/json` without parameters (JSON defines none, RFC 8259): the SDK clients parse the media type
    // of every answer (`mediaTypeEssence`), and a parameter costs them a regex pass a call. A string passed
    // through the reply's own serializer keeps the type as given (fastify appends `; charset=utf-8` to a string
    // sent with a JSON type otherwise) and goes out in one write with the head, as REST's answers do (a Buffer
    // went out as a writev of two chunks, docs/performance.md at 3251c0c).
    return reply
      .header('mcp-session-id', header)
      .type('application/json')
      .serializer(asIs)
      .send(JSON.stringify(response));
  };

  const config = { role: 'run' as const };
  const schema = { hide: true };
  for (const method of ['POST', 'GET', 'DELETE'] as const) {
    app.route({ method, url: '/mcp', config, schema, handler: (request, reply) => handle(request, reply) });
    app.route<{ Params: { name: string } }>({
      method,
      url: '/mcp/agents/:name',
      config,
      schema,
      handler: (request, reply) => handle(request, reply, request.params.name),
    });
  }
}
