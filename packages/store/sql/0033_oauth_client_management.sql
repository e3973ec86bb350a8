-- mt: compatible-from 26 (expand: a nullable column; a release before it registers clients without it and never reads it)
-- Maitento schema, version 33: the client configuration endpoint of a dynamically registered OAuth 2 client
-- (RFC 7592, docs/connections.md), which the server answered with the registration. With the registration access token
-- (sealed in the row since version 31) it deletes the client at the server when the last auth provider that used it
-- is deleted. Null for a client registered before this version or at a server that offers no client management.
ALTER TABLE mt_oauth_clients ADD COLUMN registration_client_uri text;
