-- mt: compatible-from 17 (expand: a nullable column and a backfill; a release before it stores children without the tree's key, which a child then reads from its top run)
-- Maitento schema, version 19: a run tree acts on one authority. A child run (agents as tools) now stores the key
-- that started its tree in `started_by_key_id`, as its top run does, so the checks made right before a call (the key
-- still there: `api:calls:key-deleted`) hold for every run of the tree. Children stored before this version have
-- none: each gets its top run's.
WITH RECURSIVE tree(id, key) AS (
  SELECT id, started_by_key_id FROM mt_runs WHERE parent_run_id IS NULL AND started_by_key_id IS NOT NULL
  UNION ALL
  SELECT c.id, tree.key FROM mt_runs c JOIN tree ON c.parent_run_id = tree.id
)
UPDATE mt_runs r SET started_by_key_id = tree.key FROM tree
WHERE r.id = tree.id AND r.parent_run_id IS NOT NULL AND r.started_by_key_id IS NULL;
