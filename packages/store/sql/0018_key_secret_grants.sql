-- mt: compatible-from 17 (expand: a new table; a release before it enforces its own rule on secrets while both run)
-- Maitento schema, version 18: the secrets a user key may name (docs/security.md, "Who may use a secret"). An admin
-- key uses every secret of its namespace; a user key only those granted to it when it was made. A grant goes with
-- its key or its secret. Grants are read where they are decided (a run's start, a call, a run's view), never cached.
CREATE TABLE mt_key_secret_grants (
  key_id uuid NOT NULL REFERENCES mt_api_keys (id) ON DELETE CASCADE,
  secret_id uuid NOT NULL REFERENCES mt_secrets (id) ON DELETE CASCADE,
  PRIMARY KEY (key_id, secret_id)
);
CREATE INDEX mt_key_secret_grants_secret ON mt_key_secret_grants (secret_id);
