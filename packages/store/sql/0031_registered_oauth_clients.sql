-- mt: compatible-from 26 (expand: a new table; a release before it never registers an OAuth client)
-- Maitento schema, version 31: OAuth 2 clients registered dynamically (RFC 7591, docs/connections.md). An auth
-- provider that names a protected `resource` or an `issuer` and no client id has its client registered at the
-- authorization server on first use, once per (namespace, authorization server issuer, redirect URI): the key is
-- unique, and the registration is inserted with ON CONFLICT DO NOTHING, so two processes registering at once keep
-- the first row and both use it. The client's secret and registration access token are sealed like a connection's
-- tokens (their own data key, wrapped by a master key: a master key rotation re-wraps them).

CREATE TABLE mt_oauth_clients (
  id uuid PRIMARY KEY,
  namespace text NOT NULL REFERENCES mt_namespaces (name) ON DELETE CASCADE,
  issuer text NOT NULL,
  redirect_uri text NOT NULL,
  client_id text NOT NULL,
  -- The token endpoint auth method the server registered the client with.
  token_auth_method text NOT NULL,
  -- {"clientSecret"?, "registrationAccessToken"?} sealed: the value under its own data key, wrapped by key_id.
  iv bytea NOT NULL,
  ciphertext bytea NOT NULL,
  tag bytea NOT NULL,
  key_id text NOT NULL,
  wrapped_key bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (namespace, issuer, redirect_uri)
);
