-- mt: compatible-from 19 (expand: a new table and a nullable column; a release before it writes no audit rows and leaves deployed_by empty)
-- Maitento schema, version 22: the audit log (docs/audit.md). Every change of state by a key, a console session or
-- the system is one append-only row, written in the transaction of the change. `seq` orders the rows and is the
-- cursor of `GET /v1/audit`. A version records the key that deployed it (`deployed_by`; null for versions stored
-- before this version).
CREATE TABLE mt_audit (
  seq bigserial PRIMARY KEY,
  at timestamptz NOT NULL DEFAULT now(),
  namespace text NOT NULL,
  actor_kind text NOT NULL CHECK (actor_kind IN ('key', 'system')),
  actor_id text NOT NULL,
  actor_role text,
  via text NOT NULL,
  action text NOT NULL,
  target_kind text NOT NULL,
  target_id text NOT NULL,
  before jsonb,
  after jsonb,
  request_id text
);
CREATE INDEX mt_audit_namespace_seq ON mt_audit (namespace, seq);
CREATE INDEX mt_audit_at ON mt_audit (at);
ALTER TABLE mt_resource_versions ADD COLUMN deployed_by text;
-- Append-only: a row is never changed (the retention job deletes whole rows past MT_AUDIT_RETENTION_DAYS).
CREATE FUNCTION mt_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'mt_audit is append-only: a row is never updated';
END;
$$;
CREATE TRIGGER mt_audit_no_update BEFORE UPDATE ON mt_audit FOR EACH ROW EXECUTE FUNCTION mt_audit_append_only();
