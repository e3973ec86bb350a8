-- mt: compatible-from 9 (contract: the unique index of an approval changes)
-- Maitento schema, version 9: an approval belongs to one call of one turn, never to an id a model chose.
-- A call's identity is (run, model turn, index of the call within the turn): models reuse ids such as `call_0`
-- across turns and even within one, so the model's `tool_call_id` stays for display only. `used_at` marks the
-- approval consumed by the call it covers, in the same statement that checks its status and request hash.
ALTER TABLE mt_approvals ADD COLUMN call_index integer;
ALTER TABLE mt_approvals ADD COLUMN used_at timestamptz;
DROP INDEX mt_approvals_run_call;
CREATE UNIQUE INDEX mt_approvals_run_step_call ON mt_approvals (run_id, step, call_index) WHERE run_id IS NOT NULL;
-- Approvals made outside a run that were used before this version moved their tool_call_id to `<key>:used`.
UPDATE mt_approvals SET used_at = COALESCE(answered_at, created_at)
  WHERE run_id IS NULL AND tool_call_id LIKE '%:used';
