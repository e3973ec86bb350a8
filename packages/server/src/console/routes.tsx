import { randomBytes, timingSafeEqual } from 'node:crypto';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import helmet from '@fastify/helmet';
import rateLimit from '@fastify/rate-limit';
import { type ApprovalView, answerRoleRefusal, RUN_STATUSES, type RunEvent, type RunStatus } from '@maitento/engine';
import { isMtError, type MtError } from '@maitento/errors';
import type { PreparedRequestView } from '@maitento/gateway';
import { TERMINAL_EVENT_TYPES } from '@maitento/sdk';
import { findApproval, findRun, getVersion, listAudit, listResources, listVersions } from '@maitento/store';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { serverErrors } from '../errors.js';
import { answeringActor, auditContext } from '../http/actor.js';
import { accessRefusal, allowed } from '../plugins/auth.js';
import { listRunnableVersions } from '../resources/resource-reads.js';
import { changeVersionEnabled } from '../resources/versioned-routes.js';
import type { ServerContext } from '../server/context.js';
import { traceUrlTemplateFromEnv } from '../server/settings.js';
import { type OpenStream, resumePoint, streamRunEvents } from '../streams/event-stream.js';
import { loadAssets } from './assets.js';
import { type ConsoleSession, closeSession, findSession, openSession, SESSION_TTL_MS } from './sessions.js';
import {
  ApprovalPage,
  ApprovalsPage,
  AuditPage,
  type Chrome,
  EndedControls,
  ErrorPage,
  fragment,
  InboxRows,
  LoginPage,
  PendingCount,
  page,
  type ResourceGroup,
  ResourcesPage,
  RunPage,
  RunStatusLine,
  RunsPage,
  StepItem,
} from './views.js';

const SESSION_COOKIE = 'mt_console_session';
const LOGIN_CSRF_COOKIE = 'mt_console_login';
/** Sign-in tries one address may make in a minute; the next answers 429. */
export const LOGIN_TRIES_PER_MINUTE = 5;
/** The longest reason a rejection takes. */
export const MAX_REASON = 2000;
const TERMINAL = new Set<string>(TERMINAL_EVENT_TYPES);
const ENDED: RunStatus[] = ['Completed', 'Failed', 'Cancelled'];

declare module 'fastify' {
  interface FastifyRequest {
    /** The console session of the request's cookie, set by the console's session hook. */
    consoleSession?: ConsoleSession;
  }
}

type Form = Record<string, string | undefined>;

function same(a: string | undefined, b: string): boolean {
  if (a === undefined) return false;
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The origins a console form may be posted from: this server's own (as the browser reached it), and MT_PUBLIC_URL's. */
function originAllowed(request: FastifyRequest, platformOrigin: string | undefined): boolean {
  const origin = request.headers.origin ?? refererOrigin(request.headers.referer);
  if (origin === undefined) return false;
  const own = `${request.protocol}://${request.host}`;
  if (origin === own) return true;
  return platformOrigin !== undefined && origin === new URL(platformOrigin).origin;
}

function refererOrigin(referer: string | undefined): string | undefined {
  if (referer === undefined) return undefined;
  try {
    return new URL(referer).origin;
  } catch {
    return undefined;
  }
}

/** The one-line SSE message of an HTML fragment (every line of it a `data:` line). */
function sseData(html: string): string {
  return `${html
    .split(/\r\n|\r|\n/)
    .map((line) => `data: ${line}`)
    .join('\n')}\n`;
}

/** A run step as the console's SSE writes it: its row, the run status out of band, `done` after the last. */
export function consoleStepFrame(event: RunEvent, status: string | undefined): string {
  let html = fragment(<StepItem event={event} />);
  if (status !== undefined) html += fragment(<RunStatusLine status={status} oob />);
  const ended = TERMINAL.has(event.type);
  if (ended) html += fragment(<EndedControls />);
  const frame = `id: ${event.seq}\n${sseData(html)}\n`;
  return ended ? `${frame}event: done\ndata: ended\n\n` : frame;
}

function statusAfter(event: RunEvent): string | undefined {
  switch (event.type) {
    case 'approval-requested':
      return 'PendingApproval';
    case 'approval-answered':
    case 'model-response':
    case 'user-message':
      return 'Running';
    case 'input-requested':
      return 'WaitingForInput';
    case 'run-completed':
    case 'conversation-ended':
      return 'Completed';
    case 'run-failed':
      return 'Failed';
    case 'run-cancelled':
      return 'Cancelled';
    default:
      return undefined;
  }
}

/** The latest prepared request and model text of an approval, from its run's steps. */
function approvalContext(
  events: RunEvent[],
  approvalId: string,
): { request?: PreparedRequestView; modelText?: string } {
  let modelText: string | undefined;
  for (const event of events) {
    if (event.type === 'model-response') modelText = String((event.data as { text?: string }).text ?? '');
    if (event.type === 'approval-requested') {
      const data = event.data as { approval?: ApprovalView; request?: PreparedRequestView };
      if (data.approval?.id === approvalId) return { request: data.request, modelText: modelText || undefined };
    }
  }
  return {};
}

/**
 * The web console under /console: server-rendered pages (typed JSX), a cookie session per sign-in, the same role
 * checks and engine operations as the REST API. See docs/console.md.
 */
export async function consoleRoutes(app: FastifyInstance, ctx: ServerContext): Promise<void> {
  const { engine } = ctx;
  // Pages for people, not operations of the REST API: kept out of the OpenAPI document.
  app.addHook('onRoute', (route) => {
    route.schema = { ...route.schema, hide: true };
  });
  const assets = loadAssets();
  const traceTemplate = traceUrlTemplateFromEnv();
  const open = new Set<OpenStream>();
  // Open streams would otherwise hold the server's close until their runs end.
  app.addHook('preClose', async () => {
    for (const stream of [...open]) stream.stop();
  });
  await app.register(cookie);
  await app.register(formbody);
  await app.register(helmet, {
    // Under `no-referrer` a browser sends `Origin: null` with a form, and the Origin check could not tell ours.
    referrerPolicy: { policy: 'same-origin' },
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'"],
        connectSrc: ["'self'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        objectSrc: ["'none'"],
        baseUri: ["'none'"],
      },
    },
  });
  await app.register(rateLimit, { global: false });
  app.decorateRequest('identity', undefined as unknown as FastifyRequest['identity']);
  app.decorateRequest('consoleSession', undefined);

  const secure = (request: FastifyRequest) => request.protocol === 'https';

  async function chrome(request: FastifyRequest, current: Chrome['current']): Promise<Chrome> {
    const session = request.consoleSession as ConsoleSession;
    const pending = await engine.listApprovals(session.identity.namespace, { status: 'Pending', limit: 200 });
    return {
      keyName: session.keyName,
      namespace: session.identity.namespace,
      csrfToken: session.csrfToken,
      pendingCount: pending.length,
      current,
      admin: allowed(session.identity, 'admin'),
    };
  }

  function html(reply: FastifyReply, body: string, status = 200) {
    return reply.status(status).type('text/html; charset=utf-8').header('cache-control', 'no-store').send(body);
  }

  // Every page but sign-in needs a live session; a POST also needs its Origin and the session's CSRF token.
  app.addHook('preHandler', async (request, reply) => {
    const path = request.url.split('?')[0];
    if (request.method === 'POST' && !originAllowed(request, ctx.platformOrigin)) {
      throw serverErrors.create('api:console:origin-refused', { origin: request.headers.origin ?? 'none' });
    }
    if (path === '/console/login' || path.startsWith('/console/assets/')) return;
    const token = request.cookies[SESSION_COOKIE];
    const session = token === undefined ? undefined : await findSession(ctx.db, token);
    if (session === undefined) {
      if (request.method === 'GET' && !path.endsWith('/live')) {
        return reply.redirect(`/console/login?next=${encodeURIComponent(request.url)}`, 303);
      }
      throw serverErrors.create('api:console:signed-out');
    }
    request.consoleSession = session;
    request.identity = session.identity;
    // The approval pages and actions are for keys that answer approvals (a runner key never does: docs/roles.md).
    if (path.startsWith('/console/approvals')) {
      const refused = answerRoleRefusal(session.identity.role);
      if (refused !== undefined) throw refused;
    }
    if (request.method === 'POST' && !same((request.body as Form | undefined)?._csrf, session.csrfToken)) {
      throw serverErrors.create('api:console:csrf-invalid');
    }
  });

  app.setErrorHandler(async (error: Error, request, reply) => {
    let mtError: MtError | undefined = isMtError(error) ? error : undefined;
    const status = (error as { statusCode?: number }).statusCode;
    if (!mtError && typeof status === 'number' && status >= 400 && status < 500) {
      mtError = serverErrors.create('api:request:invalid', { detail: error.message });
    }
    if (!mtError) {
      request.log.error({ err: error }, 'console request failed');
      mtError = serverErrors.create('api:server:internal');
    }
    const signedIn = request.consoleSession ? await chrome(request, 'approvals').catch(() => undefined) : undefined;
    return html(
      reply,
      page(
        <ErrorPage
          title={`Refused (${mtError.status})`}
          message={mtError.message}
          code={mtError.code}
          signedIn={signedIn}
        />,
      ),
      mtError.status,
    );
  });

  app.get<{ Params: { file: string } }>('/console/assets/:file', async (request, reply) => {
    const asset = assets.get(request.params.file);
    if (asset === undefined) throw serverErrors.create('api:request:not-found', { method: 'GET', url: request.url });
    return reply.type(asset.type).header('cache-control', 'public, max-age=3600').send(asset.body);
  });

  app.get('/console', async (request, reply) =>
    reply.redirect(answerRoleRefusal(request.identity.role) ? '/console/runs' : '/console/approvals', 303),
  );

  const loginPage = (reply: FastifyReply, request: FastifyRequest, error?: string, status = 200) => {
    const csrf = randomBytes(24).toString('base64url');
    reply.setCookie(LOGIN_CSRF_COOKIE, csrf, {
      path: '/console/login',
      httpOnly: true,
      sameSite: 'strict',
      secure: secure(request),
    });
    return html(reply, page(<LoginPage csrfToken={csrf} error={error} />), status);
  };

  app.get('/console/login', async (request, reply) => loginPage(reply, request));

  app.post<{ Body: Form; Querystring: { next?: string } }>(
    '/console/login',
    {
      config: {
        rateLimit: {
          max: LOGIN_TRIES_PER_MINUTE,
          timeWindow: 60_000,
          errorResponseBuilder: () =>
            serverErrors.create('api:console:too-many-sign-ins', { max: LOGIN_TRIES_PER_MINUTE }),
        },
      },
    },
    async (request, reply) => {
      const body = request.body ?? {};
      if (!same(body._csrf, request.cookies[LOGIN_CSRF_COOKIE] ?? ''))
        throw serverErrors.create('api:console:csrf-invalid');
      await ctx.cache.sync();
      const identity = body.key ? await ctx.cache.authenticateApiKey(body.key.trim()) : undefined;
      if (!identity || identity.keyId === 'platform-token') {
        return loginPage(reply, request, 'That API key is not valid: it may be mistyped or deleted.', 401);
      }
      const token = await openSession(ctx.db, identity, request.id);
      reply.setCookie(SESSION_COOKIE, token, {
        path: '/console',
        httpOnly: true,
        sameSite: 'strict',
        secure: secure(request),
        maxAge: SESSION_TTL_MS / 1000,
      });
      reply.clearCookie(LOGIN_CSRF_COOKIE, { path: '/console/login' });
      return reply.redirect('/console/approvals', 303);
    },
  );

  app.post('/console/logout', async (request, reply) => {
    const token = request.cookies[SESSION_COOKIE];
    if (token !== undefined) await closeSession(ctx.db, token, request.id);
    reply.clearCookie(SESSION_COOKIE, { path: '/console' });
    return reply.redirect('/console/login', 303);
  });

  async function pendingOldestFirst(namespace: string): Promise<ApprovalView[]> {
    const pending = await engine.listApprovals(namespace, { status: 'Pending', limit: 200 });
    return pending.reverse();
  }

  app.get<{ Querystring: { decided?: string } }>('/console/approvals', async (request, reply) => {
    const namespace = request.identity.namespace;
    const approvals = await pendingOldestFirst(namespace);
    const notice = request.query.decided ? 'Your decision was recorded. No other approval is pending.' : undefined;
    return html(
      reply,
      page(<ApprovalsPage chrome={await chrome(request, 'approvals')} approvals={approvals} notice={notice} />),
    );
  });

  /** The name of the secret a run's tool sends (its own `auth`), or where it comes from (a run input). */
  async function toolSecretName(namespace: string, runId: string, tool: string): Promise<string> {
    const run = await engine.getRun(namespace, runId);
    const pinned = run.versions.find((v) => v.kind === 'tool' && v.name === tool);
    if (pinned === undefined) return 'of a run input';
    const stored = await getVersion(ctx.db, namespace, 'tool', tool, pinned.version);
    return stored.resource.auth?.secret ?? 'of a run input';
  }

  // The inbox's rows alone, for an open inbox to refresh itself.
  app.get('/console/approvals/rows', async (request, reply) => {
    const approvals = await pendingOldestFirst(request.identity.namespace);
    return html(
      reply,
      fragment(<InboxRows approvals={approvals} />) + fragment(<PendingCount count={approvals.length} oob />),
    );
  });

  async function approvalPage(
    request: FastifyRequest,
    reply: FastifyReply,
    id: string,
    extra: { reasonError?: string; reason?: string; conflict?: string; notice?: string },
    status = 200,
  ) {
    const namespace = request.identity.namespace;
    const approval = await engine.getApproval(namespace, id);
    const record = await findApproval(ctx.db, approval.id, namespace);
    const events = approval.runId ? await engine.listEvents(namespace, approval.runId, 0, 1000, request.identity) : [];
    const { request: prepared, modelText } = approvalContext(events, approval.id);
    const secretName = approval.runId
      ? await toolSecretName(namespace, approval.runId, approval.functionName)
      : undefined;
    let shown: { request?: unknown; additionalInputs?: unknown } = {};
    try {
      shown = JSON.parse(approval.argumentsJson);
    } catch {
      shown = { request: approval.argumentsJson };
    }
    return html(
      reply,
      page(
        <ApprovalPage
          chrome={await chrome(request, 'approvals')}
          detail={{ approval, request: prepared, hash: record?.requestHash ?? '', shown, modelText, ...extra }}
          secretName={secretName}
        />,
      ),
      status,
    );
  }

  app.get<{ Params: { id: string }; Querystring: { decided?: string } }>(
    '/console/approvals/:id',
    async (request, reply) =>
      approvalPage(request, reply, request.params.id, {
        notice: request.query.decided ? 'Your decision was recorded. This is the next pending approval.' : undefined,
      }),
  );

  for (const decision of ['approve', 'reject'] as const) {
    app.post<{ Params: { id: string }; Body: Form }>(`/console/approvals/:id/${decision}`, async (request, reply) => {
      const namespace = request.identity.namespace;
      const id = request.params.id;
      const body = request.body ?? {};
      const reason = (body.reason ?? '').trim();
      if (decision === 'reject' && (reason.length === 0 || reason.length > MAX_REASON)) {
        const error =
          reason.length === 0
            ? serverErrors.create('api:console:reason-invalid', { length: 0, max: MAX_REASON })
            : serverErrors.create('api:console:reason-invalid', { length: reason.length, max: MAX_REASON });
        return approvalPage(request, reply, id, { reasonError: error.message, reason: body.reason }, error.status);
      }
      const approval = await engine.getApproval(namespace, id);
      const record = await findApproval(ctx.db, approval.id, namespace);
      const conflict = (a: ApprovalView) =>
        a.answeredBy
          ? `This approval was already ${a.status.toLowerCase()} by ${a.answeredBy.keyName} at ${a.answeredAt}: your answer was not recorded.`
          : `This approval is ${a.status.toLowerCase()}: your answer was not recorded.`;
      if (approval.status !== 'Pending') return approvalPage(request, reply, id, { conflict: conflict(approval) }, 409);
      if (record === undefined || !same(body.hash, record.requestHash)) {
        const error = serverErrors.create('api:console:request-changed', { id });
        return approvalPage(request, reply, id, { conflict: error.message }, error.status);
      }
      try {
        // The REST API's own operation: one place decides, and records the deciding key.
        const by = await answeringActor(ctx.db, request);
        await engine.answerApproval(namespace, id, {
          decision,
          ...(decision === 'reject' ? { reason } : {}),
          by,
          audit: auditContext(request, 'console'),
        });
      } catch (error) {
        if (isMtError(error) && error.code === 'api:approvals:already-answered') {
          return approvalPage(request, reply, id, { conflict: conflict(await engine.getApproval(namespace, id)) }, 409);
        }
        throw error;
      }
      // Focus moves to the next pending approval (the oldest), or the inbox says none is left.
      const next = (await pendingOldestFirst(namespace)).find((a) => a.id !== id);
      return reply.redirect(
        next ? `/console/approvals/${next.id}?decided=${id}` : `/console/approvals?decided=${id}`,
        303,
      );
    });
  }

  app.get<{ Querystring: { status?: string; interaction?: string; agent?: string; cursor?: string } }>(
    '/console/runs',
    async (request, reply) => {
      const { status, interaction, agent, cursor } = request.query;
      const filters = {
        status: RUN_STATUSES.includes(status as RunStatus) ? status : undefined,
        interaction: interaction?.trim() || undefined,
        agent: agent?.trim() || undefined,
      };
      const result = await engine.listRuns(
        request.identity.namespace,
        {
          ...(filters.status ? { status: filters.status as RunStatus } : {}),
          ...(filters.interaction ? { interaction: filters.interaction } : {}),
          ...(filters.agent ? { agent: filters.agent } : {}),
          ...(cursor ? { cursor } : {}),
          limit: 50,
        },
        request.identity,
      );
      return html(
        reply,
        page(
          <RunsPage
            chrome={await chrome(request, 'runs')}
            runs={result.runs}
            nextCursor={result.nextCursor}
            filters={filters}
            statuses={RUN_STATUSES}
          />,
        ),
      );
    },
  );

  app.get<{ Params: { id: string } }>('/console/runs/:id', async (request, reply) => {
    const namespace = request.identity.namespace;
    const run = await engine.getRun(namespace, request.params.id, request.identity);
    const events: RunEvent[] = [];
    for (let after = 0; ; ) {
      const batch = await engine.listEvents(namespace, run.id, after, 1000, request.identity);
      events.push(...batch);
      if (batch.length < 1000) break;
      after = batch[batch.length - 1].seq;
    }
    const ended = ENDED.includes(run.status);
    // The run's trace, linked only when MT_TRACE_URL_TEMPLATE is set and the run started with OpenTelemetry on.
    const traceId = traceTemplate === undefined ? null : ((await findRun(ctx.db, run.id, namespace))?.traceId ?? null);
    const traceUrl = traceId === null ? undefined : traceTemplate?.replaceAll('{traceId}', traceId);
    return html(
      reply,
      page(
        <RunPage chrome={await chrome(request, 'runs')} run={run} events={events} ended={ended} traceUrl={traceUrl} />,
      ),
    );
  });

  app.get<{ Params: { id: string }; Querystring: { after?: string } }>(
    '/console/runs/:id/live',
    async (request, reply) => {
      const namespace = request.identity.namespace;
      const run = await engine.getRun(namespace, request.params.id);
      const after = Number(request.query.after);
      const release = ctx.runStreams.acquire(request.identity.keyId);
      try {
        await streamRunEvents(request, reply, {
          engine,
          namespace,
          viewer: request.identity,
          runId: run.id,
          // Last-Event-ID (a reconnect) wins over ?after=: no step is sent twice or skipped.
          after: resumePoint(request.headers['last-event-id'], Number.isSafeInteger(after) ? after : undefined) ?? 0,
          ended: ENDED.includes(run.status),
          timing: ctx.streamTiming,
          open,
          wakeups: ctx.wakeups,
          // A deleted key's streams end at once (the key watch of the REST streams and MCP sessions).
          endWhen: (stop) => ctx.keys.watch(request.identity.keyId, () => stop()),
          format: (event) => consoleStepFrame(event, statusAfter(event)),
        });
      } finally {
        release();
      }
    },
  );

  app.post<{ Params: { id: string } }>('/console/runs/:id/cancel', async (request, reply) => {
    const refused = accessRefusal(request.identity, 'run');
    if (refused !== undefined) throw refused;
    await engine.cancelRun(
      request.identity.namespace,
      request.params.id,
      request.identity,
      auditContext(request, 'console'),
    );
    return reply.redirect(`/console/runs/${request.params.id}`, 303);
  });

  const GROUPS: Omit<ResourceGroup, 'items'>[] = [
    { kind: 'connector', title: 'Connectors', toggles: true },
    { kind: 'tool', title: 'Tools', toggles: true },
    { kind: 'agent', title: 'Agents', toggles: false },
    { kind: 'interaction', title: 'Interactions', toggles: false },
  ];

  async function resourcesPage(request: FastifyRequest, reply: FastifyReply, notice?: string) {
    const namespace = request.identity.namespace;
    const groups: ResourceGroup[] = [];
    for (const group of GROUPS) {
      const items = [];
      for (const r of await listResources(ctx.db, namespace, group.kind)) {
        const kind = group.kind;
        const versions =
          kind === 'agent' || kind === 'interaction'
            ? await listRunnableVersions(ctx.db, namespace, kind, r.name)
            : await listVersions(ctx.db, namespace, kind, r.name);
        items.push({ name: r.name, versions });
      }
      groups.push({ ...group, items });
    }
    return html(
      reply,
      page(
        <ResourcesPage
          chrome={await chrome(request, 'resources')}
          groups={groups}
          canToggle={allowed(request.identity, 'admin')}
          notice={notice}
        />,
      ),
    );
  }

  app.get('/console/resources', async (request, reply) => resourcesPage(request, reply));

  // The audit log (GET /v1/audit's rows and role: an admin key), newest first, 50 a page.
  app.get<{ Querystring: { action?: string; actor?: string; cursor?: string } }>(
    '/console/audit',
    async (request, reply) => {
      if (!allowed(request.identity, 'admin')) {
        throw serverErrors.create('api:auth:forbidden', { action: 'change this namespace', role: 'admin' });
      }
      const filters = {
        action: request.query.action?.trim() || undefined,
        actor: request.query.actor?.trim() || undefined,
      };
      const { cursor } = request.query;
      const result = await listAudit(ctx.db, request.identity.namespace, {
        ...filters,
        ...(cursor ? { cursor } : {}),
        limit: 50,
      });
      return html(
        reply,
        page(
          <AuditPage
            chrome={await chrome(request, 'audit')}
            entries={result.entries}
            nextCursor={result.nextCursor}
            filters={filters}
          />,
        ),
      );
    },
  );

  app.post<{ Params: { kind: string; name: string; version: string; action: string } }>(
    '/console/resources/:kind/:name/:version/:action',
    async (request, reply) => {
      const { kind, name, action } = request.params;
      const version = Number(request.params.version);
      if (
        (kind !== 'connector' && kind !== 'tool') ||
        (action !== 'disable' && action !== 'enable') ||
        !Number.isSafeInteger(version)
      ) {
        throw serverErrors.create('api:request:not-found', { method: 'POST', url: request.url });
      }
      // The REST API's role check and operation (POST /v1/{connectors,tools}/{name}/versions/{version}/{action}).
      if (!allowed(request.identity, 'admin')) {
        throw serverErrors.create('api:auth:forbidden', { action: 'change this namespace', role: 'admin' });
      }
      // The same change as the REST route's, settled the same way: answered once every server's cache has it.
      await changeVersionEnabled(
        ctx,
        request.identity.namespace,
        kind,
        name,
        version,
        action === 'enable',
        auditContext(request, 'console'),
      );
      return resourcesPage(
        request,
        reply,
        `${name} version ${version} is now ${action === 'enable' ? 'enabled' : 'disabled'}.`,
      );
    },
  );
}
