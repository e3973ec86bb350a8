-- mt: compatible-from 1 (contract: the first schema)
-- Maitento schema, version 1: namespaces, API keys, secrets and versioned resources.

CREATE TABLE mt_namespaces (
  name text PRIMARY KEY CHECK (name ~ '^[a-z0-9][a-z0-9-]{0,62}$'),
  created_at timestamptz NOT NULL DEFAULT now()
);

-- Keys are stored as the sha256 of the key; the key itself is shown once, when created.
CREATE TABLE mt_api_keys (
  id uuid PRIMARY KEY,
  namespace text NOT NULL REFERENCES mt_namespaces (name) ON DELETE CASCADE,
  name text,
  role text NOT NULL CHECK (role IN ('admin', 'user')),
  key_hash bytea NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX mt_api_keys_namespace ON mt_api_keys (namespace);

-- Values are AES-256-GCM ciphertext; the IV is random per value, the tag authenticates it.
CREATE TABLE mt_secrets (
  id uuid PRIMARY KEY,
  namespace text NOT NULL REFERENCES mt_namespaces (name) ON DELETE CASCADE,
  name text NOT NULL,
  iv bytea NOT NULL,
  ciphertext bytea NOT NULL,
  tag bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (namespace, name)
);

-- Immutable, numbered versions of connectors, tools, agents and interactions. Only `enabled` ever changes.
CREATE TABLE mt_resource_versions (
  namespace text NOT NULL REFERENCES mt_namespaces (name) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('connector', 'tool', 'agent', 'interaction')),
  name text NOT NULL,
  version integer NOT NULL CHECK (version > 0),
  hash text NOT NULL,
  resource jsonb NOT NULL,
  -- The versions this one references, pinned at deploy: [{ "kind", "name", "version" }].
  pins jsonb NOT NULL DEFAULT '[]',
  -- Tools only: the model-facing definition, kept so a later deploy can say what changed for the model.
  definition jsonb,
  enabled boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (namespace, kind, name, version)
);

-- Versions are append-only: nothing but `enabled` may be updated.
CREATE FUNCTION mt_resource_versions_immutable() RETURNS trigger AS $$
BEGIN
  IF (NEW.namespace, NEW.kind, NEW.name, NEW.version, NEW.hash, NEW.resource, NEW.pins, NEW.definition, NEW.created_at)
     IS DISTINCT FROM
     (OLD.namespace, OLD.kind, OLD.name, OLD.version, OLD.hash, OLD.resource, OLD.pins, OLD.definition, OLD.created_at)
  THEN
    RAISE EXCEPTION 'resource versions are immutable; only enabled may change';
  END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER mt_resource_versions_immutable
  BEFORE UPDATE ON mt_resource_versions
  FOR EACH ROW EXECUTE FUNCTION mt_resource_versions_immutable();
