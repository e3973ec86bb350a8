-- mt: compatible-from 9 (expand: a new table)
-- Maitento schema, version 10: sign-ins of the web console (/console). A row holds the sha256 of the
-- session cookie's random token, never an API key; it ends with its key (ON DELETE CASCADE) or after 12 h.
CREATE TABLE mt_console_sessions (
  token_hash bytea PRIMARY KEY,
  key_id uuid NOT NULL REFERENCES mt_api_keys (id) ON DELETE CASCADE,
  -- The per-session secret every console form carries (CSRF token).
  csrf_token text NOT NULL,
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX mt_console_sessions_key ON mt_console_sessions (key_id);
