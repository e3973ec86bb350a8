-- mt: compatible-from 5 (contract: a release of this schema converts secrets to envelopes at start, which a release before it cannot open)
-- Maitento schema, version 5: envelope encryption of secrets. Each value is sealed under its own random data
-- key (iv, ciphertext, tag as before); the data key is wrapped by a master key, whose id is stored beside it so
-- a rotation can re-wrap data keys without touching values and a server can say which key it lacks.
-- Rows stored before this migration keep key_id and wrapped_key null (their value is sealed straight under
-- MT_SECRET_KEY); a server converts them to envelopes when it starts (see docs/security.md).
ALTER TABLE mt_secrets
  ADD COLUMN key_id text,
  ADD COLUMN wrapped_key bytea,
  ADD CONSTRAINT mt_secrets_envelope CHECK ((key_id IS NULL) = (wrapped_key IS NULL));

-- A rotation looks for the rows not yet under the current key; startup counts rows per key id.
CREATE INDEX mt_secrets_key_id ON mt_secrets (key_id);
