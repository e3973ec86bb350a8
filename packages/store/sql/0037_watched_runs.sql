-- mt: compatible-from 26 (expand: a new nullable column; a release before it never reads it, and its appends notify every step as before)
-- Maitento schema, version 37: until when a run's events are watched by an open stream (decision 0365). A run's
-- append wakes `run:<id>` only while `watched_until` is ahead: a notifying commit holds PostgreSQL's notify lock
-- through its write-ahead log flush, so unwatched runs' appends no longer queue behind each other's flushes.
ALTER TABLE mt_runs ADD COLUMN IF NOT EXISTS watched_until timestamptz;
