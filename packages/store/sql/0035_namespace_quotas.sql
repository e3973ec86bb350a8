-- mt: compatible-from 26 (expand: a new table; a release before it never reads it and never refuses a run by it)
-- Maitento schema, version 35: quotas per namespace (docs/quotas.md; decision 0345). One row per namespace
-- that has a quota, set by the operator (PUT /v1/namespaces/{name}/quotas); a null column is no quota. The figures a
-- quota is held to are not stored: they are those of GET /v1/usage over the period (runs and tool calls of the runs
-- created since the UTC day began, tokens of the runs created since the UTC month began).
CREATE TABLE mt_namespace_quotas (
  namespace text PRIMARY KEY REFERENCES mt_namespaces (name) ON DELETE CASCADE,
  runs_per_day integer CHECK (runs_per_day >= 0),
  tool_calls_per_day integer CHECK (tool_calls_per_day >= 0),
  tokens_per_month bigint CHECK (tokens_per_month >= 0),
  updated_at timestamptz NOT NULL DEFAULT now()
);
