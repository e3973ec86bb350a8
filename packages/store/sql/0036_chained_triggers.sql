-- mt: compatible-from 26 (expand: a widened check, nullable columns and a partial index; a release before it writes no pending delivery and never reads the new columns)
-- Maitento schema, version 36: chaining triggers (docs/schedules-and-triggers.md, "When another run ends"). A trigger
-- with `on = { runCompleted = @ref(...) }` starts a run when a run of that interaction ends. Its deliveries are rows
-- of mt_trigger_deliveries keyed by the trigger and the ended run's id (the event id): written `pending` by the very
-- statement that records the run's end (runs.ts, the append's `chained` CTE), so a run ended is a delivery owed; the
-- row turns `started` in the transaction that starts its run, or `refused` (the mapping, the depth limit) with the
-- code why. Such a delivery answers no HTTP request: its answer columns stay null.
ALTER TABLE mt_trigger_deliveries DROP CONSTRAINT IF EXISTS mt_trigger_deliveries_status_check;
ALTER TABLE mt_trigger_deliveries ADD CONSTRAINT mt_trigger_deliveries_status_check
  CHECK (status IN ('pending', 'started', 'refused'));
ALTER TABLE mt_trigger_deliveries ALTER COLUMN answer_status DROP NOT NULL;
ALTER TABLE mt_trigger_deliveries ALTER COLUMN answer DROP NOT NULL;
-- The error code of a refused delivery (a webhook's also has it in its answer).
ALTER TABLE mt_trigger_deliveries ADD COLUMN code text;
-- The deliveries owed: what the chaining loop of every `mt serve` and `mt worker` takes.
CREATE INDEX mt_trigger_deliveries_pending ON mt_trigger_deliveries (received_at) WHERE status = 'pending';

-- What started a run that no request started (a schedule's tick, a webhook's delivery, another run's end), shown in
-- the run's view; null for a run a request started (and for those started before this version).
ALTER TABLE mt_runs ADD COLUMN origin jsonb;
