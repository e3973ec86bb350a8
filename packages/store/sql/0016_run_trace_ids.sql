-- mt: compatible-from 15 (expand: nullable columns)
-- Maitento schema, version 16: a run's OpenTelemetry trace (docs/telemetry.md). A run outlives the process that
-- started it, so the ids its spans use are stored with it when it starts: the trace id, the id its root span
-- (`invoke_agent`, emitted when the run ends) will have, and the span of an incoming `traceparent` that root is a
-- child of. All null when OpenTelemetry was off as the run started (then it has no trace).
ALTER TABLE mt_runs
  ADD COLUMN trace_id text,
  ADD COLUMN root_span_id text,
  ADD COLUMN trace_parent_span_id text;
