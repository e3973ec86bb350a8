-- mt: compatible-from 6 (expand: a new table and triggers)
-- Maitento schema, version 7: one counter of the changes a server's cache must not miss. Every statement that
-- deletes or changes an API key or a secret, or adds, changes or deletes a stored version (a deploy, an enabled
-- flag), adds one to it in its own transaction, whoever runs it (the API, a script, SQL by hand). A server reads it
-- with one statement before the reads of a request or a tool call and forgets what it keeps when it moved
-- (docs/decisions.md, "How a change reaches every server's cache"). Created keys and secrets need no step: unknown
-- ones are never kept.
CREATE TABLE mt_cache_epoch (
  one boolean PRIMARY KEY DEFAULT true CHECK (one),
  epoch bigint NOT NULL
);
INSERT INTO mt_cache_epoch (one, epoch) VALUES (true, 0);

CREATE FUNCTION mt_cache_epoch_step() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE mt_cache_epoch SET epoch = epoch + 1;
  RETURN NULL;
END
$$;

CREATE TRIGGER mt_api_keys_cache_epoch AFTER UPDATE OR DELETE OR TRUNCATE ON mt_api_keys
  FOR EACH STATEMENT EXECUTE FUNCTION mt_cache_epoch_step();
CREATE TRIGGER mt_secrets_cache_epoch AFTER UPDATE OR DELETE OR TRUNCATE ON mt_secrets
  FOR EACH STATEMENT EXECUTE FUNCTION mt_cache_epoch_step();
CREATE TRIGGER mt_resource_versions_cache_epoch AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON mt_resource_versions
  FOR EACH STATEMENT EXECUTE FUNCTION mt_cache_epoch_step();
