-- mt: compatible-from 2 (expand: new tables)
-- Maitento schema, version 3: runs of interactions, their stored steps (events) and approvals.
-- A run is a row; every step is a row of mt_run_events written before the next step begins, so a
-- worker that dies loses nothing: another one rebuilds the conversation from the events.
CREATE TABLE mt_runs (
  id uuid PRIMARY KEY,
  namespace text NOT NULL REFERENCES mt_namespaces (name) ON DELETE CASCADE,
  interaction text NOT NULL,
  interaction_version integer NOT NULL,
  -- Every version the run uses, pinned at start: [{ kind, name, version }].
  versions jsonb NOT NULL,
  -- The run's inputs as given (prompt values, binding values, secret ids; never a secret's value).
  inputs jsonb NOT NULL,
  interactive boolean NOT NULL DEFAULT true,
  status text NOT NULL CHECK (status IN ('Running', 'PendingApproval', 'Completed', 'Failed', 'Cancelled')),
  result text,
  error_code text,
  error_message text,
  -- The last event's seq: events are numbered 1, 2, ... per run.
  last_seq integer NOT NULL DEFAULT 0,
  cancel_requested boolean NOT NULL DEFAULT false,
  -- The worker executing the run and until when its claim holds; every write of a worker is fenced
  -- by lease_owner, so two workers never execute one run, and an expired lease is taken over.
  lease_owner text,
  lease_until timestamptz,
  started_by_key_id text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX mt_runs_namespace_created ON mt_runs (namespace, created_at DESC, id DESC);
CREATE INDEX mt_runs_namespace_interaction ON mt_runs (namespace, interaction, created_at DESC);
CREATE INDEX mt_runs_namespace_status ON mt_runs (namespace, status, created_at DESC);
-- The recovery sweep looks for Running runs whose lease has run out.
CREATE INDEX mt_runs_running_lease ON mt_runs (lease_until) WHERE status = 'Running';

CREATE TABLE mt_run_events (
  run_id uuid NOT NULL REFERENCES mt_runs (id) ON DELETE CASCADE,
  seq integer NOT NULL,
  type text NOT NULL,
  -- json, not jsonb: a step keeps its keys in the order they were written (the model's arguments as the
  -- model wrote them, so an approved call is rebuilt byte for byte from its stored step).
  data json NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (run_id, seq)
);

CREATE TABLE mt_approvals (
  id uuid PRIMARY KEY,
  namespace text NOT NULL REFERENCES mt_namespaces (name) ON DELETE CASCADE,
  -- The run that waits on it; null for an approval made outside a run (MCP).
  run_id uuid REFERENCES mt_runs (id) ON DELETE CASCADE,
  -- The model's id of the tool call it covers.
  tool_call_id text NOT NULL,
  -- The model turn (1, 2, ...) of that tool call.
  step integer,
  function_name text NOT NULL,
  agent_name text,
  -- What the person is shown: the model's arguments and the run inputs written into the call (no secret).
  arguments_json text NOT NULL,
  -- sha256 of the assembled request (method, URL, headers but the credential, body): an approved call
  -- that would differ is refused.
  request_hash text NOT NULL,
  status text NOT NULL CHECK (status IN ('Pending', 'Approved', 'Rejected', 'Expired')),
  reason text,
  answered_by_key_id text,
  answered_by_key_name text,
  answered_at timestamptz,
  expires_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX mt_approvals_namespace_status ON mt_approvals (namespace, status, created_at DESC);
-- One approval per tool call of a run: a redraft is a new tool call, so a new approval.
CREATE UNIQUE INDEX mt_approvals_run_call ON mt_approvals (run_id, tool_call_id);
