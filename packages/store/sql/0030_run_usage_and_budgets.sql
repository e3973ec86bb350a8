-- mt: compatible-from 26 (expand: nullable or defaulted columns and a widened check; a release before it leaves a run's usage at its defaults, never reads a budget, and has no run that waits for one)
-- Maitento schema, version 30: what a run spent, and what it may spend (docs/runs.md "Usage and budgets"). Each
-- append that stores a model response adds its tokens and cost to the run's totals in the same statement, so the
-- totals are never behind the journal. A run's budget (its interaction's, or the one it was started with) is
-- stored with it; a run that would pass it waits for a person to extend it (PendingBudget) or fails.
ALTER TABLE mt_runs ADD COLUMN input_tokens bigint NOT NULL DEFAULT 0;
ALTER TABLE mt_runs ADD COLUMN output_tokens bigint NOT NULL DEFAULT 0;
ALTER TABLE mt_runs ADD COLUMN cost_usd numeric NOT NULL DEFAULT 0;
ALTER TABLE mt_runs ADD COLUMN budget_tokens bigint;
ALTER TABLE mt_runs ADD COLUMN budget_cost_usd numeric;
ALTER TABLE mt_runs ADD COLUMN budget_on_exceeded text CHECK (budget_on_exceeded IN ('wait', 'fail'));
ALTER TABLE mt_runs DROP CONSTRAINT IF EXISTS mt_runs_status_check;
ALTER TABLE mt_runs ADD CONSTRAINT mt_runs_status_check
  CHECK (status IN ('Running', 'PendingApproval', 'PendingAuthorization', 'PendingBudget', 'WaitingForInput', 'Completed', 'Failed', 'Cancelled'));
