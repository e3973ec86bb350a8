-- mt: compatible-from 17 (expand: two nullable columns; a release before it neither binds nor reads an effect, and its keys keep working as before)
-- Maitento schema, version 20: an Idempotency-Key and its request's effect commit together (decision 0102).
-- `effect` is written in the effect's own transaction, fenced by the claim's token (created_at): what the request did
-- (the run it started or answered, the approval it answered), so a retry — after the key's lease too — answers from it
-- and never runs the request again. `renewed_at` carries the lease's renewals, so the claim's token no longer changes
-- while its request runs.
ALTER TABLE mt_idempotency_keys ADD COLUMN effect jsonb, ADD COLUMN renewed_at timestamptz;
