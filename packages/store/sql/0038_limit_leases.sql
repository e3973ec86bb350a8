-- mt: compatible-from 26 (expand: a new column with a default; a release before it inserts rows of one call each and counts rows, so while it runs beside this one it counts a lease of k permits as one call: docs/limits.md)
-- Maitento schema, version 38: a local allowance leased from a limit's shared count (docs/limits.md, decision 0375).
-- A `call` row stands for `permits` calls: 1 for a call admitted by the database, k for a lease of k permits a process
-- spends without a round trip (alive for the window plus the lease's time); the count is their sum. A lease's unused
-- permits are given back by lowering its `permits` when the lease ends.
ALTER TABLE mt_limit_slots ADD COLUMN permits integer NOT NULL DEFAULT 1 CHECK (permits >= 0);
