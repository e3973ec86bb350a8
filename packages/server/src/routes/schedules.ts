import { nextTick } from '@maitento/lang';
import {
  ListScheduleTicksQuerySchema,
  NameParamsSchema,
  ScheduleToggleBodySchema,
  type ScheduleState,
} from '@maitento/sdk';
import {
  type AuditContext,
  listScheduleTicks,
  nameSuggestion,
  recordAudit,
  setSchedulePaused,
  type TickingSchedule,
  tickingSchedules,
} from '@maitento/store';
import { serverErrors } from '../errors.js';
import { auditContext } from '../http/actor.js';
import { emptyBodyIsEmptyObject } from '../http/optional-body.js';
import { operation } from '../openapi/operation.js';
import { deleteRoute } from '../resources/delete-route.js';
import type { Api } from '../schemas/shared.js';
import type { ServerContext } from '../server/context.js';

/** A schedule as `GET /v1/schedules` answers it: its pause, its last tick and (ticking) its next one. */
export function stateOf(s: TickingSchedule, now: Date): ScheduleState {
  const ticking = s.schedule.enabled && !s.paused;
  const next = ticking ? nextTick(s.schedule.cron, s.schedule.timezone, now) : undefined;
  return {
    name: s.name,
    version: s.version,
    interaction: s.schedule.interaction,
    cron: s.schedule.cron,
    timezone: s.schedule.timezone,
    overlap: s.schedule.overlap,
    missed: s.schedule.missed,
    enabled: s.schedule.enabled,
    paused: s.paused,
    lastTick: s.lastTick === null ? null : s.lastTick.toISOString(),
    nextTick: next === undefined ? null : next.toISOString(),
  };
}

/**
 * `/v1/schedules`: the schedules of the namespace as they stand (their next and last ticks), pause and resume, and
 * the history of a schedule's ticks (docs/schedules-and-triggers.md).
 */
export async function scheduleRoutes(app: Api, ctx: ServerContext): Promise<void> {
  const one = (namespace: string, name: string) => tickingSchedule(ctx, namespace, name);

  app.get(
    '/schedules',
    {
      schema: operation({
        operationId: 'listSchedules',
        tags: ['schedules'],
        summary: 'The schedules of the namespace, with their last and next ticks',
        description:
          'Lists the schedules of the namespace (the latest enabled version of each): their interaction, cron ' +
          'expression and time zone, policies, whether they are paused, the latest tick recorded and the next one.',
        response: { 200: { type: 'array', items: { $ref: 'ScheduleState#' } } },
        ok: 'The schedules, by name (an empty list when none is deployed)',
        errors: [],
      }),
    },
    async (request) => {
      const now = new Date();
      return (await tickingSchedules(ctx.db, request.identity.namespace)).map((s) => stateOf(s, now));
    },
  );

  app.get(
    '/schedules/:name',
    {
      schema: operation({
        operationId: 'getSchedule',
        tags: ['schedules'],
        summary: 'One schedule, with its last and next ticks',
        description: 'Reads one schedule as it stands: its latest enabled version, its pause, its last and next ticks.',
        params: NameParamsSchema,
        response: { 200: { $ref: 'ScheduleState#' } },
        ok: 'The schedule',
        errors: ['api:schedules:not-found'],
      }),
    },
    async (request) => stateOf(await one(request.identity.namespace, request.params.name), new Date()),
  );

  deleteRoute(app, ctx, {
    kind: 'schedule',
    path: '/schedules',
    tag: 'schedules',
    noun: 'Schedule',
    one: 'schedule',
    notFound: 'api:schedules:not-found',
    notFoundError: () => (name, _version, suggestion) =>
      serverErrors.create('api:schedules:not-found', { name, suggestion }),
  });

  for (const action of ['pause', 'resume'] as const) {
    const paused = action === 'pause';
    app.post(
      `/schedules/:name/${action}`,
      {
        config: { role: 'admin' },
        schema: operation({
          operationId: paused ? 'pauseSchedule' : 'resumeSchedule',
          tags: ['schedules'],
          summary: paused ? 'Pause a schedule: its ticks start no run' : 'Resume a paused schedule',
          description: paused
            ? 'Pauses the schedule in every process: no tick starts a run until it is resumed (a deploy does not ' +
              'resume it). A run already started goes on.'
            : 'Resumes the schedule: its next tick after now starts a run; the ticks while it was paused are not made ' +
              'up for, whatever its missed-tick policy.',
          params: NameParamsSchema,
          body: ScheduleToggleBodySchema,
          response: { 200: { $ref: 'ScheduleState#' } },
          ok: paused ? 'The schedule, paused' : 'The schedule, resumed',
          errors: ['api:schedules:not-found'],
          examples: { body: { reason: paused ? 'The ticket system is down for maintenance' : 'Maintenance is over' } },
        }),
        preValidation: emptyBodyIsEmptyObject,
      },
      async (request) =>
        pauseSchedule(ctx, request.identity.namespace, request.params.name, paused, auditContext(request), {
          reason: request.body.reason,
        }),
    );
  }

  app.get(
    '/schedules/:name/ticks',
    {
      schema: operation({
        operationId: 'listScheduleTicks',
        tags: ['schedules'],
        summary: "A schedule's ticks, newest first, and what became of each",
        description:
          'The history of a schedule: each tick recorded, newest first, with the version that took it, what became ' +
          'of it (started, queued, skipped, missed, failed), the run it started and why not.',
        params: NameParamsSchema,
        querystring: ListScheduleTicksQuerySchema,
        response: { 200: { type: 'array', items: { $ref: 'ScheduleTick#' } } },
        ok: 'The latest ticks (at most `limit`, default 50)',
        errors: ['api:schedules:not-found'],
      }),
    },
    async (request) => {
      const { namespace } = request.identity;
      await one(namespace, request.params.name);
      return listScheduleTicks(ctx.db, namespace, request.params.name, request.query.limit ?? 50);
    },
  );
}

/** The ticking version of schedule `name`, or `api:schedules:not-found` (with a suggestion). */
export async function tickingSchedule(ctx: ServerContext, namespace: string, name: string): Promise<TickingSchedule> {
  const [found] = await tickingSchedules(ctx.db, namespace, name);
  if (found === undefined) {
    throw serverErrors.create('api:schedules:not-found', {
      name,
      suggestion: await nameSuggestion(ctx.db, namespace, 'schedule', name),
    });
  }
  return found;
}

/**
 * Pauses (or resumes) a schedule as `POST /v1/schedules/{name}/pause|resume` and the console do: the pause and (when
 * it changed) its audit row in one transaction; answers the schedule as it then stands.
 */
export async function pauseSchedule(
  ctx: ServerContext,
  namespace: string,
  name: string,
  paused: boolean,
  audit: AuditContext,
  options: { reason?: string } = {},
): Promise<ScheduleState> {
  const { reason } = options;
  const before = await tickingSchedule(ctx, namespace, name);
  await ctx.db.transaction(async (tx) => {
    await setSchedulePaused(tx, namespace, name, paused);
    if (before.paused !== paused) {
      await recordAudit(tx, {
        ...audit,
        namespace,
        action: paused ? 'schedule.paused' : 'schedule.resumed',
        target: { kind: 'schedule', id: name },
        before: { paused: before.paused },
        after: { paused, ...(reason === undefined ? {} : { reason }) },
      });
    }
  });
  return stateOf(await tickingSchedule(ctx, namespace, name), new Date());
}
