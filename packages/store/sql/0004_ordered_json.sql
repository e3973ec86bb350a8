-- mt: compatible-from 4 (contract: column types change and the append-only trigger is replaced; a release before it compared jsonb)
-- Resource versions keep their JSON text as deployed. jsonb sorts object keys (by length, then bytewise),
-- which reordered the properties of a tool's model-facing definition and of a connector's schema.request,
-- and the order is what a model reads. `json` keeps the text as given. Rows stored before this migration
-- keep the order jsonb gave them (the original is gone); the next deploy that changes them stores theirs.
ALTER TABLE mt_resource_versions
  ALTER COLUMN resource TYPE json USING resource::json,
  ALTER COLUMN pins DROP DEFAULT,
  ALTER COLUMN pins TYPE json USING pins::json,
  ALTER COLUMN pins SET DEFAULT '[]',
  ALTER COLUMN definition TYPE json USING definition::json;

-- `json` has no equality operator, so the append-only rule compares the stored text.
CREATE OR REPLACE FUNCTION mt_resource_versions_immutable() RETURNS trigger AS $$
BEGIN
  IF (NEW.namespace, NEW.kind, NEW.name, NEW.version, NEW.hash, NEW.resource::text, NEW.pins::text,
      NEW.definition::text, NEW.created_at)
     IS DISTINCT FROM
     (OLD.namespace, OLD.kind, OLD.name, OLD.version, OLD.hash, OLD.resource::text, OLD.pins::text,
      OLD.definition::text, OLD.created_at)
  THEN
    RAISE EXCEPTION 'resource versions are immutable; only enabled may change';
  END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;
