-- mt: compatible-from 8 (contract: lease_until dropped, lease_owner renamed)
-- Maitento schema, version 8: one liveness mechanism for a run. pg-boss owns a run's job (a heartbeat while a
-- worker holds it, at most one active job per run, retries), so the run row keeps no lease: lease_until, its
-- renewals and the sweep that read it go. What stays is a fencing token, `claim`: set to the attempt's id when a
-- worker takes the run (no expiry, no renewal), and required by every write of that worker, so a stalled worker
-- whose job pg-boss has retried elsewhere cannot write (its next write fails and it stops).
-- Without lease_until and its index, a step's UPDATE of mt_runs touches no indexed column (HOT when the page has room).
DROP INDEX IF EXISTS mt_runs_running_lease;
ALTER TABLE mt_runs DROP COLUMN lease_until;
ALTER TABLE mt_runs RENAME COLUMN lease_owner TO claim;
