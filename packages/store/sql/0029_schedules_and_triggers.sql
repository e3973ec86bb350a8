-- mt: compatible-from 26 (expand: a widened check and new tables; a release before it never writes a schedule or a trigger, ticks nothing and takes no webhook)
-- Maitento schema, version 29: schedules (docs/schedules-and-triggers.md). A schedule is a versioned resource like the
-- other kinds. Each tick a process takes is one row of `mt_schedule_ticks`, keyed by the schedule and the tick's
-- time: the row and the run it starts commit in one transaction, so however many `mt serve` and `mt worker`
-- processes tick, and whatever crashes, a tick starts at most one run, and a tick no run started is a row saying why
-- (skipped, missed, queued, failed). The key holds the name, not the version: two processes that see different
-- versions across a deploy still take a tick once; the row records the version that took it.
ALTER TABLE mt_resource_versions DROP CONSTRAINT IF EXISTS mt_resource_versions_kind_check;
ALTER TABLE mt_resource_versions ADD CONSTRAINT mt_resource_versions_kind_check
  CHECK (kind IN ('auth-provider', 'connector', 'tool', 'agent', 'interaction', 'schedule', 'trigger'));

CREATE TABLE mt_schedule_ticks (
  namespace text NOT NULL REFERENCES mt_namespaces (name) ON DELETE CASCADE,
  schedule text NOT NULL,
  tick timestamptz NOT NULL,
  version integer NOT NULL,
  -- started: run_id is its run; queued: waits for the schedule's last run to end (overlap "queue-one"); skipped: the
  -- last run had not ended (overlap "skip") or another tick was queued; missed: no process ran at the time (missed
  -- "skip", or the earlier ticks of a "run-once"); failed: the run could not start (detail says why).
  status text NOT NULL CHECK (status IN ('started', 'queued', 'skipped', 'missed', 'failed')),
  -- Not a foreign key: the retention pass deletes ended runs, the history of ticks stays.
  run_id uuid,
  detail text,
  recorded_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (namespace, schedule, tick)
);
CREATE UNIQUE INDEX mt_schedule_ticks_run ON mt_schedule_ticks (run_id) WHERE run_id IS NOT NULL;
CREATE INDEX mt_schedule_ticks_queued ON mt_schedule_ticks (namespace, schedule) WHERE status = 'queued';

-- Pause and resume over the API (not in the schedule's file, so a deploy neither pauses nor resumes it).
CREATE TABLE mt_schedule_states (
  namespace text NOT NULL REFERENCES mt_namespaces (name) ON DELETE CASCADE,
  schedule text NOT NULL,
  paused boolean NOT NULL,
  -- The last resume: ticks at or before it are not made up for.
  resumed_at timestamptz,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (namespace, schedule)
);

-- Inbound webhooks (triggers/<name>.mtr): one row a delivery, keyed by the trigger and the delivery's event id, so a
-- replay of a delivery answers what the first did (status and body) and starts no second run. A started delivery's
-- row commits with its run. A delivery the payload mapping refused is a row too (its detail says why); one whose
-- signature failed stores nothing but a count.
CREATE TABLE mt_trigger_deliveries (
  namespace text NOT NULL REFERENCES mt_namespaces (name) ON DELETE CASCADE,
  trigger text NOT NULL,
  event_id text NOT NULL,
  version integer NOT NULL,
  status text NOT NULL CHECK (status IN ('started', 'refused')),
  run_id uuid,
  detail text,
  answer_status integer NOT NULL,
  answer jsonb NOT NULL,
  received_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (namespace, trigger, event_id)
);
CREATE INDEX mt_trigger_deliveries_latest ON mt_trigger_deliveries (namespace, trigger, received_at DESC);

-- Deliveries refused before anything was stored (signature, timestamp, size): counted, by reason.
CREATE TABLE mt_trigger_rejections (
  namespace text NOT NULL REFERENCES mt_namespaces (name) ON DELETE CASCADE,
  trigger text NOT NULL,
  reason text NOT NULL,
  count bigint NOT NULL,
  last_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (namespace, trigger, reason)
);
