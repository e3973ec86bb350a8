-- mt: compatible-from 19 (expand: a widened check and new tables; a release before it never writes an auth provider, a connection or a connect link)
-- Maitento schema, version 25: OAuth 2 connections per end user (docs/connections.md). Auth providers are versioned
-- resources like the other kinds. A connection is one end user's authorisation at one provider, in one namespace:
-- its tokens sealed as an envelope (a data key of its own, wrapped by a master key: the secrets' scheme, so a
-- master key rotation re-wraps them too). A connect link is the pending authorisation request behind a URL handed
-- to an end user: its state is stored only as a hash, its PKCE verifier sealed; it is used once and expires.

ALTER TABLE mt_resource_versions DROP CONSTRAINT IF EXISTS mt_resource_versions_kind_check;
ALTER TABLE mt_resource_versions ADD CONSTRAINT mt_resource_versions_kind_check
  CHECK (kind IN ('auth-provider', 'connector', 'tool', 'agent', 'interaction'));

CREATE TABLE mt_connections (
  id uuid PRIMARY KEY,
  namespace text NOT NULL REFERENCES mt_namespaces (name) ON DELETE CASCADE,
  provider text NOT NULL,
  end_user text NOT NULL,
  -- Active: its tokens work (or refresh); NeedsReauthorization: the provider refused its refresh token.
  status text NOT NULL CHECK (status IN ('Active', 'NeedsReauthorization')),
  -- The scopes the provider granted.
  scopes text[] NOT NULL,
  -- {"accessToken", "refreshToken"?, "tokenType"} sealed: the value under its own data key, wrapped by key_id.
  iv bytea NOT NULL,
  ciphertext bytea NOT NULL,
  tag bytea NOT NULL,
  key_id text NOT NULL,
  wrapped_key bytea NOT NULL,
  has_refresh_token boolean NOT NULL,
  access_expires_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  refreshed_at timestamptz,
  UNIQUE (namespace, provider, end_user)
);

CREATE TABLE mt_connect_links (
  id uuid PRIMARY KEY,
  namespace text NOT NULL REFERENCES mt_namespaces (name) ON DELETE CASCADE,
  -- sha256 of the state parameter: the state itself is only in the URL.
  state_hash text NOT NULL UNIQUE,
  provider text NOT NULL,
  provider_version integer NOT NULL,
  end_user text NOT NULL,
  scopes text[] NOT NULL,
  redirect_uri text NOT NULL,
  return_url text,
  -- {"codeVerifier", "nonce"?} sealed like a connection's tokens.
  iv bytea NOT NULL,
  ciphertext bytea NOT NULL,
  tag bytea NOT NULL,
  key_id text NOT NULL,
  wrapped_key bytea NOT NULL,
  created_by text,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  used_at timestamptz
);

CREATE INDEX mt_connect_links_expires ON mt_connect_links (expires_at);
