-- mt: compatible-from 13 (expand: a column with a default, a status check widened)
-- Maitento schema, version 14: structured results and conversations (issue #21).
-- A run's result may be structured. An interaction that declares `result.schema` ends with a JSON object matching
-- it: `result` then holds its JSON text (in the model's key order) and `result_structured` is true, so the API shows
-- it as an object; otherwise the result is the model's text.
ALTER TABLE mt_runs ADD COLUMN result_structured boolean NOT NULL DEFAULT false;
-- A conversation run waits for the next message in a status of its own, holding no worker (as PendingApproval does).
ALTER TABLE mt_runs DROP CONSTRAINT mt_runs_status_check;
ALTER TABLE mt_runs ADD CONSTRAINT mt_runs_status_check
  CHECK (status IN ('Running', 'PendingApproval', 'WaitingForInput', 'Completed', 'Failed', 'Cancelled'));
-- The idle sweep reads the waiting conversations only; when each stops waiting is in its last event.
CREATE INDEX mt_runs_waiting_input ON mt_runs (updated_at) WHERE status = 'WaitingForInput';
