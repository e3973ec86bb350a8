-- mt: compatible-from 17 (expand: a widened check and nullable or defaulted columns; a release that knows schema 17 never writes the new roles or columns and runs on it)
-- Maitento schema, version 21: roles and approval policies (docs/roles.md). A key may also be a `runner` (a program,
-- an agent, an MCP host: runs and reads its own runs, never answers an approval) or an `approver` (reads and answers
-- approvals, nothing else). An approval stores the policy of the tool version it covers, taken when it was made (so
-- it follows the version the run pinned), the key that started its run's tree (or the MCP session's key), and each
-- distinct key that approved it so far (a two-person rule: it is Approved once `policy.count` of them did).
ALTER TABLE mt_api_keys DROP CONSTRAINT IF EXISTS mt_api_keys_role_check;
ALTER TABLE mt_api_keys ADD CONSTRAINT mt_api_keys_role_check CHECK (role IN ('admin', 'user', 'runner', 'approver'));
ALTER TABLE mt_approvals ADD COLUMN policy jsonb;
ALTER TABLE mt_approvals ADD COLUMN started_by_key_id text;
ALTER TABLE mt_approvals ADD COLUMN approved_by jsonb NOT NULL DEFAULT '[]'::jsonb;
