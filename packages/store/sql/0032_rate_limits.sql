-- mt: compatible-from 26 (expand: a new table; a release before it never limits a call and never reads it)
-- Maitento schema, version 32: rate limits and concurrency caps of tools (docs/limits.md). One row per call admitted
-- under a limit: a `call` row lives for the limit's window (a sliding window log: at most N rows younger than the
-- window, so no 2N burst across a window boundary), an `in-flight` row until the call ends or its lease expires (a
-- killed process frees its slots when the lease lapses). Every process admits calls under the same transaction-scoped
-- advisory lock of the (namespace, limit key), so the count holds across processes.
CREATE TABLE mt_limit_slots (
  namespace text NOT NULL,
  limit_key text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('call', 'in-flight')),
  id text NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (namespace, limit_key, kind, id)
);
CREATE INDEX mt_limit_slots_expiry ON mt_limit_slots (namespace, limit_key, expires_at);
