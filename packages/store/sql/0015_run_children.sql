-- mt: compatible-from 14 (expand: nullable columns and a partial index)
-- Maitento schema, version 15: agents as tools. A run may be the child of another run's tool call: an agent
-- handed a task by the parent's agent (`functions = [{ agent = @ref(...) }]`). The child is a run like any other
-- (its own events, job, approvals); these columns link it to the call that started it. The unique index is the
-- call's identity (run, model turn, index in the turn): a parent resumed after a crash finds its child, it never
-- starts a second one for the same call.
ALTER TABLE mt_runs ADD COLUMN parent_run_id uuid REFERENCES mt_runs (id) ON DELETE CASCADE;
ALTER TABLE mt_runs ADD COLUMN parent_step integer;
ALTER TABLE mt_runs ADD COLUMN parent_call_index integer;
-- The agent the run plays when it is not the interaction's own (a child run's), and how deep it is (0 at the top).
ALTER TABLE mt_runs ADD COLUMN agent text;
ALTER TABLE mt_runs ADD COLUMN depth integer NOT NULL DEFAULT 0;
CREATE UNIQUE INDEX mt_runs_parent_call ON mt_runs (parent_run_id, parent_step, parent_call_index)
  WHERE parent_run_id IS NOT NULL;
