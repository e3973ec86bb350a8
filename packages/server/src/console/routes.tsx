import { randomBytes, timingSafeEqual } from 'node:crypto';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import helmet from '@fastify/helmet';
import rateLimit from '@fastify/rate-limit';
import {
  type ApprovalView,
  answerRoleRefusal,
  engineErrors,
  RUN_STATUSES,
  type RunEvent,
  type RunStatus,
} from '@maitento/engine';
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
import { oidcSettingsFromEnv, traceUrlTemplateFromEnv } from '../server/settings.js';
import { type OpenStream, resumePoint, streamRunEvents } from '../streams/event-stream.js';
import { loadAssets } from './assets.js';
import { automationRoutes } from './automation-routes.js';
import { catalogRoutes, type PostedFile } from './catalog.js';
import { exploreRoutes } from './explore.js';
import { ApprovalCard, ApprovalsPage, INBOX_CARDS, type InboxCard, InboxDecided, InboxRows } from './inbox.js';
import { OidcSignIn, type SignInTransaction } from './oidc.js';
import {
  type ConsoleSession,
  closeSession,
  findSession,
  openPersonSession,
  openSession,
  SESSION_TTL_MS,
  switchNamespace,
} from './sessions.js';
import {
  ApprovalPage,
  AuditPage,
  BudgetPanel,
  type Chrome,
  EndedControls,
  ErrorPage,
  fragment,
  LoginPage,
  PendingCount,
  page,
  type ResourceGroup,
  ResourcesPage,
  RunBudgetLine,
  RunPage,
  RunSpentLine,
  RunStatusLine,
  type RunFilters,
  RunsPage,
  SignedInPage,
  StepItem,
} from './views.js';
import { buildTimeline, type ChildTimelines, Timeline } from './timeline.js';
import { usageRoutes } from './usage.js';

const SESSION_COOKIE = 'mt_console_session';
const LOGIN_CSRF_COOKIE = 'mt_console_login';
/** The state, nonce and PKCE verifier of a single sign-on under way, between its start and its callback. */
const SSO_COOKIE = 'mt_console_sso';
/** How long a single sign-on may take at the provider. */
const SSO_TRANSACTION_SECONDS = 600;
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

/** The transaction a sign-in's cookie carries, or undefined when it is not one. */
function readTransaction(cookie: string): SignInTransaction | undefined {
  try {
    const value = JSON.parse(Buffer.from(cookie, 'base64url').toString('utf8')) as Partial<SignInTransaction>;
    const ok = [value.state, value.nonce, value.verifier].every((v) => typeof v === 'string' && v.length > 0);
    return ok ? (value as SignInTransaction) : undefined;
  } catch {
    return undefined;
  }
}

/** A time of the runs list's filters (`YYYY-MM-DDTHH:MM` or a date, UTC) as `YYYY-MM-DDTHH:MM`, else undefined. */
function minuteOf(value: string | undefined): string | undefined {
  const v = value?.trim();
  if (!v || !/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2})?$/.test(v)) return undefined;
  const minute = v.length === 10 ? `${v}T00:00` : v;
  return Number.isFinite(Date.parse(`${minute}Z`)) ? minute : undefined;
}

/** The one-line SSE message of an HTML fragment (every line of it a `data:` line). */
function sseData(html: string): string {
  return `${html
    .split(/\r\n|\r|\n/)
    .map((line) => `data: ${line}`)
    .join('\n')}\n`;
}

/** A run step as the console's SSE writes it: its row, the run status out of band, `done` after the last. */
export function consoleStepFrame(event: RunEvent, status: string | undefined, extra = ''): string {
  let html = fragment(<StepItem event={event} />);
  if (status !== undefined) html += fragment(<RunStatusLine status={status} oob />);
  html += extra;
  const ended = TERMINAL.has(event.type);
  if (ended) html += fragment(<EndedControls />);
  const frame = `id: ${event.seq}\n${sseData(html)}\n`;
  return ended ? `${frame}event: done\ndata: ended\n\n` : frame;
}

/** A run's usage as its page shows it. */
type RunUsage = { inputTokens: number; outputTokens: number; costUsd: number };

/** Adds what a `model-response` event's turn spent to `usage` (its cost rounded as the run's column keeps it). */
function addTurn(usage: RunUsage, event: RunEvent): void {
  const data = event.data as {
    usage?: { inputTokens?: number | null; outputTokens?: number | null };
    costUsd?: number | null;
  };
  usage.inputTokens += data.usage?.inputTokens ?? 0;
  usage.outputTokens += data.usage?.outputTokens ?? 0;
  usage.costUsd = Math.round((usage.costUsd + (data.costUsd ?? 0)) * 1e10) / 1e10;
}

function statusAfter(event: RunEvent): string | undefined {
  switch (event.type) {
    case 'approval-requested':
      return 'PendingApproval';
    case 'authorization-requested':
      return 'PendingAuthorization';
    case 'limit-waiting':
      return 'PendingLimit';
    case 'limit-wait-over':
    case 'authorization-completed':
    case 'approval-answered':
    case 'model-response':
    case 'user-message':
      return 'Running';
    case 'input-requested':
      return 'WaitingForInput';
    case 'budget-exceeded':
      return (event.data as { budget?: { onExceeded?: string } }).budget?.onExceeded === 'fail'
        ? undefined
        : 'PendingBudget';
    case 'budget-extended':
      return 'Running';
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
): {
  request?: PreparedRequestView;
  modelText?: string;
  modelArguments?: unknown;
  context?: InboxCard['context'];
} {
  let modelText: string | undefined;
  let context: InboxCard['context'];
  let calls: { arguments?: unknown }[] = [];
  for (const event of events) {
    if (event.type === 'run-started') {
      const inputs = (event.data as { inputs?: Record<string, unknown> }).inputs ?? {};
      context = { title: "The run's inputs", json: inputs };
    }
    if (event.type === 'user-message') {
      context = { title: 'The last user message', text: String((event.data as { text?: string }).text ?? '') };
    }
    if (event.type === 'model-response') {
      const data = event.data as { text?: string; toolCalls?: { arguments?: unknown }[] };
      modelText = String(data.text ?? '');
      calls = data.toolCalls ?? [];
    }
    if (event.type === 'approval-requested') {
      const data = event.data as { approval?: ApprovalView; request?: PreparedRequestView; index?: number };
      if (data.approval?.id === approvalId) {
        const modelArguments = typeof data.index === 'number' ? calls[data.index]?.arguments : undefined;
        return { request: data.request, modelText: modelText || undefined, modelArguments, context };
      }
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
  // Single sign-on for people (docs/sso.md) when MT_OIDC_ISSUER is set; a setting that cannot work stops the start.
  const oidcSettings = oidcSettingsFromEnv(ctx.platformOrigin);
  const sso = oidcSettings === undefined ? undefined : new OidcSignIn(oidcSettings);
  const traceTemplate = traceUrlTemplateFromEnv();
  const open = new Set<OpenStream>();
  // Open streams would otherwise hold the server's close until their runs end.
  app.addHook('preClose', async () => {
    for (const stream of [...open]) stream.stop();
  });
  await app.register(cookie);
  await app.register(formbody);
  // A knowledge base's upload form (multipart/form-data): read with the platform's own `Request.formData()`, its
  // fields as text and its file as bytes, at most a document's limit (MT_KNOWLEDGE_DOCUMENT_LIMIT) and a little more.
  app.addContentTypeParser(
    'multipart/form-data',
    { parseAs: 'buffer', bodyLimit: ctx.knowledgeDocumentLimit + 64 * 1024 },
    async (request: FastifyRequest, body: Buffer) => {
      const data = await new Request('http://console.invalid/', {
        method: 'POST',
        headers: { 'content-type': String(request.headers['content-type']) },
        body: new Uint8Array(body),
      }).formData();
      const out: Record<string, string | PostedFile> = {};
      for (const [key, value] of data as unknown as Iterable<[string, string | File]>) {
        if (typeof value === 'string') out[key] = value;
        else out[key] = { filename: value.name, type: value.type, bytes: Buffer.from(await value.arrayBuffer()) };
      }
      return out;
    },
  );
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
        // Signing out redirects a person to their provider's end-session endpoint: a form's redirect is under it too.
        formAction: ["'self'", ...(oidcSettings ? [oidcSettings.issuer.origin] : [])],
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
      ...(session.person ? { namespaces: Object.keys(session.person.roles).sort() } : {}),
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
    if (path === '/console/login' || path.startsWith('/console/login/') || path.startsWith('/console/assets/')) return;
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
    return html(reply, page(<LoginPage csrfToken={csrf} error={error} sso={oidcSettings?.providerName} />), status);
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
    // A person signs out at their provider too, when it offers it (RP-initiated logout); it sends them back here.
    const atProvider = request.consoleSession?.person && sso ? await sso.endSessionUrl() : undefined;
    return reply.redirect(atProvider ?? '/console/login', 303);
  });

  if (sso !== undefined) {
    const settings = sso.settings;
    app.get('/console/login/oidc', async (request, reply) => {
      const { url, transaction } = await sso.start();
      // SameSite=Lax, not Strict: the provider's redirect back to the callback is a cross-site navigation.
      reply.setCookie(SSO_COOKIE, Buffer.from(JSON.stringify(transaction)).toString('base64url'), {
        path: '/console/login/oidc',
        httpOnly: true,
        sameSite: 'lax',
        secure: secure(request),
        maxAge: SSO_TRANSACTION_SECONDS,
      });
      return reply.redirect(url.href, 303);
    });

    app.get<{ Querystring: Record<string, string | undefined> }>(
      '/console/login/oidc/callback',
      async (request, reply) => {
        const carried = request.cookies[SSO_COOKIE];
        reply.clearCookie(SSO_COOKIE, { path: '/console/login/oidc' });
        const transaction = carried === undefined ? undefined : readTransaction(carried);
        if (transaction === undefined) {
          throw serverErrors.create('api:console:sso-failed', {
            provider: settings.providerName,
            reason: 'this browser did not start this sign-in (or took more than 10 minutes)',
          });
        }
        const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?')) : '';
        const signedIn = await sso.finish(query, transaction);
        const label = signedIn.person.name ?? signedIn.person.email ?? signedIn.person.subject;
        if (Object.keys(signedIn.roles).length === 0) {
          request.log.info(
            { issuer: signedIn.person.issuer, subject: signedIn.person.subject },
            'sign-in refused: no role',
          );
          throw serverErrors.create('api:console:no-role', {
            provider: settings.providerName,
            person: label,
            claim: settings.rolesClaim,
          });
        }
        // The sooner of the longest session and the ID token's expiry.
        const expiresAt = new Date(Math.min(Date.now() + settings.sessionMs, signedIn.idTokenExpiresAt.getTime()));
        const token = await openPersonSession(ctx.db, signedIn.person, signedIn.roles, expiresAt, request.id);
        reply.setCookie(SESSION_COOKIE, token, {
          path: '/console',
          httpOnly: true,
          sameSite: 'strict',
          secure: secure(request),
          maxAge: Math.max(1, Math.floor((expiresAt.getTime() - Date.now()) / 1000)),
        });
        return html(reply, page(<SignedInPage name={label} next="/console" />));
      },
    );
  }

  // A person with roles in several namespaces (single sign-on) chooses the one the console shows.
  app.post<{ Body: Form }>('/console/namespace', async (request, reply) => {
    const token = request.cookies[SESSION_COOKIE] as string;
    const namespace = request.body?.namespace ?? '';
    if (!request.consoleSession?.person || !(await switchNamespace(ctx.db, token, namespace))) {
      throw serverErrors.create('api:auth:forbidden', {
        action: `open namespace ${namespace}`,
        role: 'admin, user or approver',
      });
    }
    return reply.redirect('/console', 303);
  });

  async function pendingOldestFirst(namespace: string): Promise<ApprovalView[]> {
    const pending = await engine.listApprovals(namespace, { status: 'Pending', limit: 200 });
    return pending.reverse();
  }

  /** The name of the secret a run's tool sends (its own `auth`), or where it comes from (a run input). */
  async function toolSecretName(namespace: string, runId: string, tool: string): Promise<string> {
    const run = await engine.getRun(namespace, runId);
    const pinned = run.versions.find((v) => v.kind === 'tool' && v.name === tool);
    if (pinned === undefined) return 'of a run input';
    const stored = await getVersion(ctx.db, namespace, 'tool', tool, pinned.version);
    return stored.resource.auth?.secret ?? 'of a run input';
  }

  /** All a person sees to decide one approval: the prepared request, the model's words and arguments, the context. */
  async function approvalCard(request: FastifyRequest, approval: ApprovalView): Promise<InboxCard> {
    const namespace = request.identity.namespace;
    const record = await findApproval(ctx.db, approval.id, namespace);
    const events = approval.runId ? await engine.listEvents(namespace, approval.runId, 0, 1000, request.identity) : [];
    const { request: prepared, modelText, modelArguments, context } = approvalContext(events, approval.id);
    // The arguments to edit: those a person set last, else the model's (a run's approval only: decision 0215).
    const editable = record?.editedArguments ?? modelArguments;
    const editText = approval.runId === null || editable === undefined ? undefined : JSON.stringify(editable, null, 2);
    const secretName = approval.runId
      ? await toolSecretName(namespace, approval.runId, approval.functionName)
      : undefined;
    let shown: { request?: unknown; additionalInputs?: unknown } = {};
    try {
      shown = JSON.parse(approval.argumentsJson);
    } catch {
      shown = { request: approval.argumentsJson };
    }
    return {
      approval,
      hash: record?.requestHash ?? '',
      shown,
      ...(prepared ? { request: prepared } : {}),
      ...(secretName ? { secretName } : {}),
      ...(modelText ? { modelText } : {}),
      ...(context ? { context } : {}),
      ...(editText === undefined ? {} : { editText }),
    };
  }

  /** The inbox's cards (the oldest {@link INBOX_CARDS} in full) and the rest by name. */
  async function inbox(request: FastifyRequest) {
    const pending = await pendingOldestFirst(request.identity.namespace);
    const cards: InboxCard[] = [];
    for (const approval of pending.slice(0, INBOX_CARDS)) cards.push(await approvalCard(request, approval));
    return { cards, more: pending.slice(INBOX_CARDS), count: pending.length };
  }

  app.get<{ Querystring: { decided?: string } }>('/console/approvals', async (request, reply) => {
    const { cards, more } = await inbox(request);
    const notice = request.query.decided
      ? `Your decision was recorded. ${cards.length === 0 ? 'No other approval is pending.' : 'The oldest pending approval is first.'}`
      : undefined;
    return html(
      reply,
      page(
        <ApprovalsPage
          chrome={await chrome(request, 'approvals')}
          cards={cards}
          more={more}
          now={Date.now()}
          notice={notice}
        />,
      ),
    );
  });

  // The inbox's cards alone, for an open inbox to refresh itself.
  app.get('/console/approvals/rows', async (request, reply) => {
    const { cards, more, count } = await inbox(request);
    const csrfToken = (request.consoleSession as ConsoleSession).csrfToken;
    return html(
      reply,
      fragment(<InboxRows cards={cards} more={more} csrfToken={csrfToken} now={Date.now()} />) +
        fragment(<PendingCount count={count} oob />),
    );
  });

  type Extra = Pick<InboxCard, 'reasonError' | 'reason' | 'editError' | 'editText'> & {
    conflict?: string;
    notice?: string;
  };

  async function approvalPage(request: FastifyRequest, reply: FastifyReply, id: string, extra: Extra, status = 200) {
    const approval = await engine.getApproval(request.identity.namespace, id);
    const card = await approvalCard(request, approval);
    return html(
      reply,
      page(
        <ApprovalPage
          chrome={await chrome(request, 'approvals')}
          detail={{
            approval,
            request: card.request,
            hash: card.hash,
            shown: card.shown,
            modelText: card.modelText,
            ...(card.editText === undefined ? {} : { editText: card.editText }),
            ...extra,
          }}
          secretName={card.secretName}
        />,
      ),
      status,
    );
  }

  /**
   * A decision made from the inbox with htmx: its card again with the error next to its field, or (decided, or
   * answered by someone else first) no card and a notice.
   */
  async function inboxAnswer(request: FastifyRequest, reply: FastifyReply, id: string, extra: Extra, status = 200) {
    const namespace = request.identity.namespace;
    const csrfToken = (request.consoleSession as ConsoleSession).csrfToken;
    if (extra.conflict !== undefined || extra.notice !== undefined) {
      const pending = (await pendingOldestFirst(namespace)).length;
      return html(
        reply,
        fragment(<InboxDecided notice={extra.conflict ?? extra.notice ?? ''} pending={pending} />),
        status,
      );
    }
    const card = await approvalCard(request, await engine.getApproval(namespace, id));
    return html(
      reply,
      fragment(<ApprovalCard card={{ ...card, ...extra }} csrfToken={csrfToken} now={Date.now()} />),
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
      const fromInbox = body.from === 'inbox';
      // In place (the inbox with htmx): the card or a notice; else the approval's page, as without JavaScript.
      const answer = fromInbox && request.headers['hx-request'] === 'true' ? inboxAnswer : approvalPage;
      const reason = (body.reason ?? '').trim();
      if (decision === 'reject' && (reason.length === 0 || reason.length > MAX_REASON)) {
        const error =
          reason.length === 0
            ? serverErrors.create('api:console:reason-invalid', { length: 0, max: MAX_REASON })
            : serverErrors.create('api:console:reason-invalid', { length: reason.length, max: MAX_REASON });
        return answer(request, reply, id, { reasonError: error.message, reason: body.reason }, error.status);
      }
      const approval = await engine.getApproval(namespace, id);
      const record = await findApproval(ctx.db, approval.id, namespace);
      const conflict = (a: ApprovalView) =>
        a.answeredBy
          ? `This approval was already ${a.status.toLowerCase()} by ${a.answeredBy.keyName} at ${a.answeredAt}: your answer was not recorded.`
          : `This approval is ${a.status.toLowerCase()}: your answer was not recorded.`;
      if (approval.status !== 'Pending') return answer(request, reply, id, { conflict: conflict(approval) }, 409);
      if (record === undefined || !same(body.hash, record.requestHash)) {
        const error = serverErrors.create('api:console:request-changed', { id });
        return answer(request, reply, id, { conflict: error.message }, error.status);
      }
      // Edit, then approve: the arguments typed in, bound to the request this person saw (its hash, checked above).
      const editText = decision === 'approve' ? body.arguments : undefined;
      let edit: { arguments: unknown; requestHash: string } | undefined;
      if (editText !== undefined) {
        try {
          edit = { arguments: JSON.parse(editText), requestHash: record.requestHash };
        } catch {
          const error = engineErrors.create('api:approvals:edit-invalid', {
            tool: approval.functionName,
            problems: 'the arguments are not JSON',
          });
          return answer(request, reply, id, { editError: error.message, editText }, error.status);
        }
      }
      try {
        // The REST API's own operation: one place decides, and records the deciding key.
        const by = await answeringActor(ctx.db, request);
        await engine.answerApproval(namespace, id, {
          decision,
          ...(decision === 'reject' ? { reason } : {}),
          by,
          audit: auditContext(request, 'console'),
          ...(edit === undefined ? {} : { edit }),
        });
      } catch (error) {
        if (isMtError(error) && editText !== undefined && error.code.startsWith('api:approvals:edit-')) {
          return answer(request, reply, id, { editError: error.message, editText }, error.status);
        }
        if (isMtError(error) && error.code === 'api:approvals:already-answered') {
          return answer(request, reply, id, { conflict: conflict(await engine.getApproval(namespace, id)) }, 409);
        }
        throw error;
      }
      const done = `${decision === 'approve' ? 'Approved' : 'Rejected'} ${approval.functionName}${approval.runId ? ` (run ${approval.runId.slice(0, 8)})` : ''}.`;
      if (answer === inboxAnswer) return inboxAnswer(request, reply, id, { notice: done });
      // From the inbox without JavaScript: back to it. From an approval's page: focus moves to the next pending
      // approval (the oldest), or the inbox says none is left.
      const next = fromInbox ? undefined : (await pendingOldestFirst(namespace)).find((a) => a.id !== id);
      return reply.redirect(
        next ? `/console/approvals/${next.id}?decided=${id}` : `/console/approvals?decided=${id}`,
        303,
      );
    });
  }

  // The runs list with its filters in the URL (shareable): status, interaction, agent, a tool called, a time window (UTC, to the
  // minute), text in the run's id and a failed run's error code (decision 0330). htmx swaps the results in place.
  app.get<{
    Querystring: {
      status?: string;
      interaction?: string;
      agent?: string;
      tool?: string;
      since?: string;
      until?: string;
      q?: string;
      code?: string;
      cursor?: string;
    };
  }>('/console/runs', async (request, reply) => {
    const { status, interaction, agent, cursor } = request.query;
    const filters: RunFilters = {
      status: RUN_STATUSES.includes(status as RunStatus) ? status : undefined,
      interaction: interaction?.trim() || undefined,
      agent: agent?.trim() || undefined,
      tool: request.query.tool?.trim().slice(0, 1000) || undefined,
      since: minuteOf(request.query.since),
      until: minuteOf(request.query.until),
      q: request.query.q?.trim().toLowerCase().slice(0, 36) || undefined,
      code: request.query.code?.trim() || undefined,
    };
    const result = await engine.listRuns(
      request.identity.namespace,
      {
        ...(filters.status ? { status: filters.status as RunStatus } : {}),
        ...(filters.interaction ? { interaction: filters.interaction } : {}),
        ...(filters.agent ? { agent: filters.agent } : {}),
        ...(filters.tool ? { tool: filters.tool } : {}),
        ...(filters.since ? { since: `${filters.since}Z` } : {}),
        ...(filters.until ? { until: `${filters.until}Z` } : {}),
        ...(filters.q ? { idContains: filters.q } : {}),
        ...(filters.code ? { errorCode: filters.code } : {}),
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
  });

  /** Every stored event of a run, in order (those up to `upTo` only, when it is given). */
  async function allEvents(
    request: FastifyRequest,
    runId: string,
    upTo = Number.POSITIVE_INFINITY,
  ): Promise<RunEvent[]> {
    const events: RunEvent[] = [];
    for (let after = 0; after < upTo; ) {
      const batch = await engine.listEvents(request.identity.namespace, runId, after, 1000, request.identity);
      events.push(...batch.filter((event) => event.seq <= upTo));
      if (batch.length < 1000) break;
      after = batch[batch.length - 1].seq;
    }
    return events;
  }

  /** A run's timeline and its child runs' (nested under the calls that started them, at most 3 levels, 50 runs). */
  async function timelineOf(request: FastifyRequest, events: RunEvent[]) {
    const now = Date.now();
    const model = buildTimeline(events, now);
    const children: ChildTimelines = new Map();
    let level = model.spans.flatMap((s) => (s.childRunId ? [s.childRunId] : []));
    for (let depth = 0; depth < 3 && level.length > 0 && children.size < 50; depth++) {
      const next: string[] = [];
      for (const id of level.slice(0, 50 - children.size)) {
        const child = buildTimeline(await allEvents(request, id), now, `run-${id}-`);
        children.set(id, child);
        for (const s of child.spans) if (s.childRunId) next.push(s.childRunId);
      }
      level = next;
    }
    return { model, children };
  }

  async function runPage(
    request: FastifyRequest,
    reply: FastifyReply,
    id: string,
    budgetForm?: { error: string; tokens?: string; costUsd?: string },
    status = 200,
  ) {
    const namespace = request.identity.namespace;
    const run = await engine.getRun(namespace, id, request.identity);
    const events = await allEvents(request, run.id);
    const ended = ENDED.includes(run.status);
    const { model, children } = await timelineOf(request, events);
    // The run's trace, linked only when MT_TRACE_URL_TEMPLATE is set and the run started with OpenTelemetry on.
    const traceId = traceTemplate === undefined ? null : ((await findRun(ctx.db, run.id, namespace))?.traceId ?? null);
    const traceUrl = traceId === null ? undefined : traceTemplate?.replaceAll('{traceId}', traceId);
    return html(
      reply,
      page(
        <RunPage
          chrome={await chrome(request, 'runs')}
          run={run}
          events={events}
          ended={ended}
          timeline={model}
          children={children}
          traceUrl={traceUrl}
          may={{ answer: allowed(request.identity, 'answer'), cancel: allowed(request.identity, 'run') }}
          budgetForm={budgetForm}
        />,
      ),
      status,
    );
  }

  app.get<{ Params: { id: string } }>('/console/runs/:id', async (request, reply) =>
    runPage(request, reply, request.params.id),
  );

  // Extending a run's budget (decision 0355): POST /v1/runs/{id}/budget's role and operation, from the run's page.
  app.post<{ Params: { id: string }; Body: Form }>('/console/runs/:id/budget', async (request, reply) => {
    const refused = accessRefusal(request.identity, 'answer');
    if (refused !== undefined) throw refused;
    const body = request.body ?? {};
    if (body.decision === 'fail') {
      // Let it fail: POST /v1/runs/{id}/budget with { onExceeded: "fail" } and no larger limit.
      const by = await answeringActor(ctx.db, request);
      await engine.extendBudget(
        request.identity.namespace,
        request.params.id,
        { onExceeded: 'fail' },
        by,
        request.identity,
        auditContext(request, 'console'),
      );
      return reply.redirect(`/console/runs/${request.params.id}`, 303);
    }
    const typed = { tokens: body.tokens?.trim() ?? '', costUsd: body.costUsd?.trim() ?? '' };
    const tokens = typed.tokens === '' ? undefined : Number(typed.tokens);
    const costUsd = typed.costUsd === '' ? undefined : Number(typed.costUsd);
    const refuse = (error: string, status: number) =>
      runPage(request, reply, request.params.id, { error, ...typed }, status);
    if (tokens !== undefined && !(Number.isSafeInteger(tokens) && tokens >= 1)) {
      return refuse('The token limit is a whole number of at least 1.', 400);
    }
    if (costUsd !== undefined && !(Number.isFinite(costUsd) && costUsd >= 0.000001 && costUsd <= 1e9)) {
      return refuse('The cost limit is a number of US dollars, at least 0.000001.', 400);
    }
    if (tokens === undefined && costUsd === undefined)
      return refuse('Give a new token limit, cost limit or both.', 400);
    try {
      const by = await answeringActor(ctx.db, request);
      await engine.extendBudget(
        request.identity.namespace,
        request.params.id,
        { ...(tokens === undefined ? {} : { tokens }), ...(costUsd === undefined ? {} : { costUsd }) },
        by,
        request.identity,
        auditContext(request, 'console'),
      );
    } catch (error) {
      if (isMtError(error) && error.code === 'api:runs:budget-too-small') return refuse(error.message, error.status);
      throw error;
    }
    return reply.redirect(`/console/runs/${request.params.id}`, 303);
  });

  // The timeline alone, for a running run's page to refresh it (it stops asking once the run has ended).
  app.get<{ Params: { id: string } }>('/console/runs/:id/timeline', async (request, reply) => {
    const run = await engine.getRun(request.identity.namespace, request.params.id, request.identity);
    const { model, children } = await timelineOf(request, await allEvents(request, run.id));
    return html(
      reply,
      fragment(<Timeline runId={run.id} model={model} children={children} poll={!ENDED.includes(run.status)} />),
    );
  });

  app.get<{ Params: { id: string }; Querystring: { after?: string } }>(
    '/console/runs/:id/live',
    async (request, reply) => {
      const namespace = request.identity.namespace;
      const run = await engine.getRun(namespace, request.params.id);
      const after = Number(request.query.after);
      const session = request.consoleSession as ConsoleSession;
      const may = { answer: allowed(request.identity, 'answer'), cancel: allowed(request.identity, 'run') };
      // The budget panel appears as the run starts to wait for it, and goes once it is extended.
      const budgetFrame = (event: RunEvent): string => {
        if (event.type === 'budget-extended') return fragment(<div id="budget" hx-swap-oob="true" />);
        if (event.type !== 'budget-exceeded' || statusAfter(event) !== 'PendingBudget') return '';
        const data = event.data as {
          spent: { tokens: number; costUsd: number };
          budget: { tokens: number | null; costUsd: number | null };
        };
        return fragment(
          <BudgetPanel
            runId={run.id}
            spent={data.spent}
            budget={data.budget}
            csrfToken={session.csrfToken}
            may={may}
            oob
          />,
        );
      };
      // Last-Event-ID (a reconnect) wins over ?after=: no step is sent twice or skipped.
      const from = resumePoint(request.headers['last-event-id'], Number.isSafeInteger(after) ? after : undefined) ?? 0;
      // The "Spent" line and the budget's share go on as model turns end: what the turns up to `from` spent (the
      // page shows that), plus each turn streamed; a budget extended is shown with its new limits at once.
      const usage: RunUsage = { inputTokens: 0, outputTokens: 0, costUsd: 0 };
      for (const event of await allEvents(request, run.id, from))
        if (event.type === 'model-response') addTurn(usage, event);
      let budget = run.budget;
      const spentFrame = (event: RunEvent): string => {
        if (event.type === 'budget-extended') {
          budget = (event.data as { budget: NonNullable<typeof budget> }).budget;
        } else if (event.type === 'model-response') {
          addTurn(usage, event);
        } else {
          return '';
        }
        return (
          fragment(<RunSpentLine usage={usage} oob />) +
          (budget ? fragment(<RunBudgetLine budget={budget} usage={usage} oob />) : '')
        );
      };
      const release = ctx.runStreams.acquire(request.identity.keyId);
      try {
        await streamRunEvents(request, reply, {
          engine,
          namespace,
          viewer: request.identity,
          runId: run.id,
          after: from,
          ended: ENDED.includes(run.status),
          timing: ctx.streamTiming,
          open,
          wakeups: ctx.wakeups,
          // A deleted key's streams end at once (the key watch of the REST streams and MCP sessions).
          endWhen: (stop) => ctx.keys.watch(request.identity.keyId, () => stop()),
          format: (event) => consoleStepFrame(event, statusAfter(event), budgetFrame(event) + spentFrame(event)),
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

  // Connections, schedules, triggers and outbound webhooks (decision 0305).
  automationRoutes(app, ctx, { chrome, html });
  // The overview and the tools' pages with a dry run (decision 0330).
  exploreRoutes(app, ctx, { chrome, html });
  usageRoutes(app, ctx, { chrome, html });
  catalogRoutes(app, ctx, { chrome, html });

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
