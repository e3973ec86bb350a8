-- mt: compatible-from 26 (expand: a widened check; a release before it never makes a run wait for a limit's window)
-- Maitento schema, version 34: a run whose tool call is over a limit with onLimit = "wait" waits durably for the
-- limit's window to open (docs/limits.md, decision 0340): status PendingLimit, its `limit-waiting` event saying until
-- when, holding no worker; a worker's sweep makes it Running again and queues it then.
ALTER TABLE mt_runs DROP CONSTRAINT IF EXISTS mt_runs_status_check;
ALTER TABLE mt_runs ADD CONSTRAINT mt_runs_status_check
  CHECK (status IN ('Running', 'PendingApproval', 'PendingAuthorization', 'PendingBudget', 'PendingLimit', 'WaitingForInput', 'Completed', 'Failed', 'Cancelled'));
