-- mt: compatible-from 1 (expand: a new table)
-- Maitento schema, version 2: recorded Idempotency-Keys, so a retried POST/PUT/DELETE is answered once.
-- A row is in progress while `status` is null; a completed row holds the answer sealed with AES-256-GCM
-- under the server's secret key (answers such as a new API key must not lie here in clear).
CREATE TABLE mt_idempotency_keys (
  namespace text NOT NULL REFERENCES mt_namespaces (name) ON DELETE CASCADE,
  -- The key id of the caller; 'platform-token' for a platform token.
  api_key_id text NOT NULL,
  idem_key text NOT NULL,
  -- sha256 of method, URL and raw body: the same key with another request is refused.
  fingerprint bytea NOT NULL,
  status integer,
  iv bytea,
  ciphertext bytea,
  tag bytea,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (namespace, api_key_id, idem_key)
);
CREATE INDEX mt_idempotency_keys_created_at ON mt_idempotency_keys (created_at);
