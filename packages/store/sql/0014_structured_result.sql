-- Maitento schema, version 14: a run's result may be structured. An interaction that declares `result.schema` ends
-- with a JSON object matching it: `result` then holds its JSON text (in the model's key order) and
-- `result_structured` is true, so the API shows it as an object; otherwise the result is the model's text.
ALTER TABLE mt_runs ADD COLUMN result_structured boolean NOT NULL DEFAULT false;
