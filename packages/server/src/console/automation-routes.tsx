import {
  enqueueWebhookTest,
  getWebhookEndpoint,
  isUuid,
  latestTrigger,
  listConnections,
  listDeliveries,
  listResources,
  listScheduleTicks,
  listWebhookDeliveries,
  listWebhookEndpoints,
  storeErrors,
  tickingSchedules,
  triggerRejections,
} from '@maitento/store';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { serverErrors } from '../errors.js';
import { auditContext } from '../http/actor.js';
import { accessRefusal, allowed } from '../plugins/auth.js';
import { removeConnection } from '../routes/connections.js';
import { pauseSchedule, stateOf, tickingSchedule } from '../routes/schedules.js';
import type { ServerContext } from '../server/context.js';
import {
  ConnectionsPage,
  SchedulePage,
  SchedulesPage,
  type TriggerItem,
  TriggerPage,
  TriggersPage,
  WebhookPage,
  WebhooksPage,
} from './automation.js';
import { type Chrome, page } from './views.js';

/** What the console's routes lend these pages: the header of a signed-in page, and an HTML answer. */
export interface PageKit {
  chrome: (request: FastifyRequest, current: Chrome['current']) => Promise<Chrome>;
  html: (reply: FastifyReply, body: string, status?: number) => FastifyReply;
}

/** The latest ticks a schedule's page shows, and the latest deliveries of a trigger's or an endpoint's. */
const HISTORY = 50;

/** The refusal of an admin's page or action to any other role (the REST routes' `admin` level). */
function adminOnly(request: FastifyRequest): void {
  const refused = accessRefusal(request.identity, 'admin');
  if (refused !== undefined) throw refused;
}

/**
 * The console's pages of connections, schedules, triggers and outbound webhooks (docs/console.md, decision 0305), in
 * the session's namespace, with the REST routes' role levels and store functions (and their operations, for the
 * actions: a connection deleted, a schedule paused or resumed, a test event sent).
 */
export function automationRoutes(app: FastifyInstance, ctx: ServerContext, kit: PageKit): void {
  const { chrome, html } = kit;

  async function connectionsPage(request: FastifyRequest, reply: FastifyReply, notice?: string) {
    const connections = await listConnections(ctx.db, request.identity.namespace);
    return html(
      reply,
      page(
        <ConnectionsPage
          chrome={await chrome(request, 'connections')}
          connections={connections}
          canDelete={allowed(request.identity, 'run')}
          notice={notice}
        />,
      ),
    );
  }

  app.get('/console/connections', async (request, reply) => connectionsPage(request, reply));

  // DELETE /v1/connections/{id}'s operation and level (`run`): revoked at the provider, deleted, audited.
  app.post<{ Params: { id: string } }>('/console/connections/:id/delete', async (request, reply) => {
    const refused = accessRefusal(request.identity, 'run');
    if (refused !== undefined) throw refused;
    const gone = await removeConnection(
      ctx,
      request.identity.namespace,
      request.params.id,
      auditContext(request, 'console'),
      request.log,
    );
    return connectionsPage(
      request,
      reply,
      `The connection of ${gone.endUser} at ${gone.provider} was revoked and deleted.`,
    );
  });

  async function schedulesPage(request: FastifyRequest, reply: FastifyReply, notice?: string) {
    const now = new Date();
    const schedules = (await tickingSchedules(ctx.db, request.identity.namespace)).map((s) => stateOf(s, now));
    return html(
      reply,
      page(
        <SchedulesPage
          chrome={await chrome(request, 'schedules')}
          schedules={schedules}
          canPause={allowed(request.identity, 'admin')}
          notice={notice}
        />,
      ),
    );
  }

  async function schedulePage(request: FastifyRequest, reply: FastifyReply, name: string, notice?: string) {
    const namespace = request.identity.namespace;
    const schedule = stateOf(await tickingSchedule(ctx, namespace, name), new Date());
    const ticks = await listScheduleTicks(ctx.db, namespace, name, HISTORY);
    return html(
      reply,
      page(
        <SchedulePage
          chrome={await chrome(request, 'schedules')}
          schedule={schedule}
          ticks={ticks}
          canPause={allowed(request.identity, 'admin')}
          notice={notice}
        />,
      ),
    );
  }

  app.get('/console/schedules', async (request, reply) => schedulesPage(request, reply));
  app.get<{ Params: { name: string } }>('/console/schedules/:name', async (request, reply) =>
    schedulePage(request, reply, request.params.name),
  );

  // POST /v1/schedules/{name}/pause|resume's operation and level (`admin`).
  app.post<{ Params: { name: string; action: string }; Body: Record<string, string | undefined> }>(
    '/console/schedules/:name/:action',
    async (request, reply) => {
      const { name, action } = request.params;
      if (action !== 'pause' && action !== 'resume') {
        throw serverErrors.create('api:request:not-found', { method: 'POST', url: request.url });
      }
      adminOnly(request);
      const state = await pauseSchedule(
        ctx,
        request.identity.namespace,
        name,
        action === 'pause',
        auditContext(request, 'console'),
      );
      const notice = `${state.name} is ${state.paused ? 'paused: its ticks start no run' : 'ticking again'}.`;
      return request.body?.from === 'page'
        ? schedulePage(request, reply, name, notice)
        : schedulesPage(request, reply, notice);
    },
  );

  /** The URL senders post a trigger's deliveries to (MT_PUBLIC_URL's origin, else the one the browser reached). */
  const hookUrl = (request: FastifyRequest, name: string) => {
    const origin = ctx.platformOrigin ?? `${request.protocol}://${request.host}`;
    const path = `/v1/hooks/${encodeURIComponent(request.identity.namespace)}/${encodeURIComponent(name)}`;
    return new URL(path, origin).href;
  };

  /** A trigger's latest enabled version (the one its URL takes deliveries for), or `api:hooks:not-found`. */
  async function triggerItem(request: FastifyRequest, name: string): Promise<TriggerItem | undefined> {
    const latest = await latestTrigger(ctx.db, request.identity.namespace, name);
    if (latest === undefined) return undefined;
    return { name, version: latest.version, trigger: latest.trigger, url: hookUrl(request, name) };
  }

  app.get('/console/triggers', async (request, reply) => {
    const items: TriggerItem[] = [];
    for (const r of await listResources(ctx.db, request.identity.namespace, 'trigger')) {
      const item = await triggerItem(request, r.name);
      if (item !== undefined) items.push(item);
    }
    return html(reply, page(<TriggersPage chrome={await chrome(request, 'triggers')} triggers={items} />));
  });

  // GET /v1/triggers/{name}/deliveries's reads (every role).
  app.get<{ Params: { name: string } }>('/console/triggers/:name', async (request, reply) => {
    const namespace = request.identity.namespace;
    const { name } = request.params;
    const item = await triggerItem(request, name);
    if (item === undefined) throw serverErrors.create('api:hooks:not-found', { namespace, name });
    const deliveries = await listDeliveries(ctx.db, namespace, name, HISTORY);
    const rejected = await triggerRejections(ctx.db, namespace, name);
    return html(
      reply,
      page(
        <TriggerPage
          chrome={await chrome(request, 'triggers')}
          item={item}
          deliveries={deliveries}
          rejected={rejected}
        />,
      ),
    );
  });

  // /v1/webhooks is an admin's (docs/roles.md): so are these pages.
  app.get('/console/webhooks', async (request, reply) => {
    adminOnly(request);
    const endpoints = await listWebhookEndpoints(ctx.db, request.identity.namespace);
    return html(reply, page(<WebhooksPage chrome={await chrome(request, 'webhooks')} endpoints={endpoints} />));
  });

  async function webhookPage(request: FastifyRequest, reply: FastifyReply, id: string, notice?: string) {
    const namespace = request.identity.namespace;
    // The REST route's id check (a uuid): anything else is no endpoint, not a database error.
    if (!isUuid(id)) throw storeErrors.create('api:webhooks:not-found', { id });
    const endpoint = await getWebhookEndpoint(ctx.db, namespace, id);
    const deliveries = await listWebhookDeliveries(ctx.db, namespace, id, { limit: HISTORY });
    return html(
      reply,
      page(
        <WebhookPage
          chrome={await chrome(request, 'webhooks')}
          endpoint={endpoint}
          deliveries={deliveries}
          notice={notice}
        />,
      ),
    );
  }

  app.get<{ Params: { id: string } }>('/console/webhooks/:id', async (request, reply) => {
    adminOnly(request);
    return webhookPage(request, reply, request.params.id);
  });

  // POST /v1/webhooks/{id}/test's operation: a webhook.test delivery, sent by the delivery loop like any other.
  app.post<{ Params: { id: string } }>('/console/webhooks/:id/test', async (request, reply) => {
    adminOnly(request);
    if (!isUuid(request.params.id)) throw storeErrors.create('api:webhooks:not-found', { id: request.params.id });
    await enqueueWebhookTest(ctx.db, request.identity.namespace, request.params.id);
    return webhookPage(
      request,
      reply,
      request.params.id,
      'A test event is on its way: its delivery is below (reload to follow it).',
    );
  });
}
