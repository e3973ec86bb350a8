-- mt: compatible-from 17 (contract: the bounded cache lease needs every serving process to be a member; a release before it is not one)
-- Maitento schema, version 17: the members of the bounded cache lease (docs/decisions.md, "How a change reaches every
-- server's cache 'at once'"). Each `mt serve` and `mt worker` on PostgreSQL holds one row under a random id taken at
-- join: `lease_until` (the database's clock) is how long it may serve its cache without reading the epoch, `acked` the
-- last epoch it has applied (forgotten what it kept before). A writer answers once no live member lags behind the
-- epoch it produced, or once every lagging lease has ended. The table belongs to the server's role: no other role
-- may read, insert or update it (nobody can join, hold a write or acknowledge for a stalled member by naming itself).
CREATE TABLE mt_cache_members (
  id uuid PRIMARY KEY,
  acked bigint NOT NULL,
  lease_until timestamptz NOT NULL,
  -- The member's lease length (MT_CACHE_LEASE_MS): a settle waits for the longest one, not its own.
  lease_ms integer NOT NULL
);
REVOKE ALL ON mt_cache_members FROM PUBLIC;

-- The epoch's step also wakes every member at once (topic `cache` on the wake-up channel, delivered at commit): it
-- reads the epoch itself, the payload is never trusted.
CREATE OR REPLACE FUNCTION mt_cache_epoch_step() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE mt_cache_epoch SET epoch = epoch + 1;
  PERFORM pg_notify('mt_wake', 'cache');
  RETURN NULL;
END
$$;
