-- mt: compatible-from 5 (expand: a default and a value truncated)
-- Maitento schema, version 6: a run's created_at at millisecond precision. It is the key of the runs' page cursor,
-- which clients hold as an ISO string (milliseconds): two runs started within one millisecond but different
-- microseconds would otherwise sort by a difference the cursor cannot carry, and a page could skip or repeat one.
-- Ties within a millisecond are broken by the run's id, as the cursor does.
ALTER TABLE mt_runs ALTER COLUMN created_at SET DEFAULT date_trunc('milliseconds', now());
UPDATE mt_runs SET created_at = date_trunc('milliseconds', created_at)
  WHERE created_at <> date_trunc('milliseconds', created_at);
