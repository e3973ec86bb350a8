// Schedules (docs/schedules-and-triggers.md), declared once like ./connections.ts: the answers (with an `$id`,
// published as components) and what requests carry (inline in their operations).
import { type Static, Type } from 'typebox';
import { SCHEDULE_MISSED, SCHEDULE_OVERLAPS, SCHEDULE_TICK_STATUSES } from './constants.js';
import { timestamp, uuid } from './formats.js';
import { ref, stringEnum } from './schemas.js';

const nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T, description: string) =>
  Type.Union([schema, Type.Null()], { description });

/** One schedule as it stands: its latest version's settings, whether it is paused, and its last and next ticks. */
export const ScheduleStateSchema = Type.Object(
  {
    name: Type.String(),
    version: Type.Integer({ description: 'The latest version (the one that ticks)' }),
    interaction: Type.String(),
    cron: Type.String(),
    timezone: Type.String(),
    overlap: stringEnum(SCHEDULE_OVERLAPS),
    missed: stringEnum(SCHEDULE_MISSED),
    enabled: Type.Boolean({ description: 'As deployed: false in its file, or its version disabled' }),
    paused: Type.Boolean({
      description: 'Paused over the API (mt schedule-pause); resumed ticks start after the resume',
    }),
    lastTick: nullable(timestamp(), 'The latest tick recorded, whatever became of it (null: none yet)'),
    nextTick: nullable(timestamp(), 'The next tick, when enabled and not paused (null otherwise)'),
  },
  { $id: 'ScheduleState', description: 'A schedule, whether it ticks, and its last and next ticks' },
);

/** One tick of a schedule and what became of it. */
export const ScheduleTickSchema = Type.Object(
  {
    tick: timestamp(),
    version: Type.Integer({ description: 'The version of the schedule the tick was taken by' }),
    status: stringEnum(SCHEDULE_TICK_STATUSES),
    runId: nullable(uuid(), 'The run the tick started (null: none, or not yet for a queued tick)'),
    detail: nullable(Type.String(), 'Why it was skipped, missed or failed'),
    recordedAt: timestamp(),
  },
  { $id: 'ScheduleTick', description: 'One tick of a schedule: started, queued, skipped, missed or failed' },
);

/** The body of `POST /v1/schedules/{name}/pause` and `/resume` (may be left out). */
export const ScheduleToggleBodySchema = Type.Object(
  {
    reason: Type.Optional(Type.String({ maxLength: 500, description: 'Why, kept in the audit log with the change' })),
  },
  { additionalProperties: false },
);

/** The query of `GET /v1/schedules/{name}/ticks`. */
export const ListScheduleTicksQuerySchema = Type.Object(
  { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, description: 'At most this many (default 50)' })) },
  { additionalProperties: false },
);

/** The answer to a delivery of an inbound webhook that started its run. */
export const HookAcceptedSchema = Type.Object(
  {
    eventId: Type.String({ description: "The delivery's event id (a replay of it answers this again)" }),
    status: stringEnum(['started']),
    runId: uuid(),
  },
  { $id: 'HookAccepted', description: 'The delivery was verified and its run started (it goes on in a worker)' },
);

/** One delivery of a trigger, as its delivery log keeps it. */
export const TriggerDeliverySchema = Type.Object(
  {
    eventId: Type.String(),
    version: Type.Integer({ description: 'The version of the trigger that took it' }),
    status: stringEnum(['pending', 'started', 'refused']),
    runId: nullable(uuid(), 'The run it started (null when refused or pending)'),
    detail: nullable(Type.String(), 'Why it was refused'),
    code: Type.Optional(nullable(Type.String(), 'The error code it was refused with (null unless refused)')),
    answerStatus: nullable(
      Type.Integer(),
      "The HTTP status it was answered (and a replay is answered); null for a chaining trigger's (nobody asked)",
    ),
    receivedAt: timestamp(),
  },
  {
    $id: 'TriggerDelivery',
    description:
      "One delivery of a trigger and what became of it: an inbound webhook's (its event id the sender's), or a chaining trigger's (its event id the ended run's id; pending until its run starts)",
  },
);

/** The answer of `GET /v1/triggers/{name}/deliveries`. */
export const TriggerDeliveryLogSchema = Type.Object(
  {
    deliveries: Type.Array(ref(TriggerDeliverySchema), { description: 'The latest deliveries, newest first' }),
    rejected: Type.Unsafe<Record<string, number>>({
      type: 'object',
      additionalProperties: { type: 'integer' },
      description: 'Deliveries refused before anything was stored, counted by reason (signature, timestamp, size)',
    }),
  },
  { $id: 'TriggerDeliveryLog' },
);

/** The schemas of schedules and triggers with an `$id`, in the order a server adds them. */
export const scheduleWireSchemas = [
  ScheduleStateSchema,
  ScheduleTickSchema,
  HookAcceptedSchema,
  TriggerDeliverySchema,
  TriggerDeliveryLogSchema,
] as const;

/** A schedule as it stands. */
export type ScheduleState = Static<typeof ScheduleStateSchema>;
/** One tick of a schedule. */
export type ScheduleTick = Static<typeof ScheduleTickSchema>;
/** The answer to a delivery that started its run. */
export type HookAccepted = Static<typeof HookAcceptedSchema>;
/** A trigger's delivery log. */
export type TriggerDeliveryLog = Static<typeof TriggerDeliveryLogSchema>;
