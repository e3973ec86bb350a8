-- mt: compatible-from 12 (expand: a storage parameter)
-- Maitento schema, version 13: room on mt_runs' pages for a run's next version. A step's write updates the run row
-- (last_seq, updated_at) without changing an indexed column, which PostgreSQL can do as a HOT update (no index entry
-- written) only when the row's page has room for the new version: at the default fillfactor (100) a page filled by
-- inserts has none, and the update writes an entry in each of mt_runs' four indexes. 70 keeps a third of each new
-- page free (pages written before keep their layout until rewritten). See docs/performance.md (issue #18).
ALTER TABLE mt_runs SET (fillfactor = 70);
