-- mt: compatible-from 26 (expand: a nullable column and a widened check; a release before it starts runs without an end user, never reads it, and has no run that waits for an authorisation)
-- Maitento schema, version 28: runs that act for an end user (docs/connections.md). A connector with
-- auth = "OAuth2" sends the access token of the run's end user's connection at its auth provider; a child run acts
-- for its parent's. A run whose end user has no usable connection waits for them to connect (PendingAuthorization),
-- holding no worker, as it waits for a person's approval.
ALTER TABLE mt_runs ADD COLUMN end_user text;
ALTER TABLE mt_runs DROP CONSTRAINT IF EXISTS mt_runs_status_check;
ALTER TABLE mt_runs ADD CONSTRAINT mt_runs_status_check
  CHECK (status IN ('Running', 'PendingApproval', 'PendingAuthorization', 'WaitingForInput', 'Completed', 'Failed', 'Cancelled'));
