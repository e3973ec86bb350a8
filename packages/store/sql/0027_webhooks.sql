-- mt: compatible-from 22 (expand: new tables; a release before it writes no delivery rows and delivers none)
-- Maitento schema, version 27: outbound webhooks (docs/notifications.md). An endpoint is a URL of a namespace, the
-- events it wants (none listed: every event) and its signing secrets, sealed as an envelope like a secret's (the
-- current secret, and during a rotation's grace the previous one, which signs too until `previous_until`). A delivery
-- is one event for one endpoint: written in the statement or transaction of the change that causes the event (the
-- outbox), then sent by the delivery loop of `mt serve` and `mt worker`, retried with backoff; its id is the
-- `webhook-id` of every attempt. The row is the endpoint's delivery log too.
CREATE TABLE mt_webhook_endpoints (
  id uuid PRIMARY KEY,
  namespace text NOT NULL REFERENCES mt_namespaces (name) ON DELETE CASCADE,
  url text NOT NULL,
  -- The event types it receives; empty: every type.
  events text[] NOT NULL,
  description text,
  enabled boolean NOT NULL DEFAULT true,
  -- {"current": "whsec_...", "previous"?: "whsec_..."} sealed: the value under its own data key, wrapped by key_id.
  iv bytea NOT NULL,
  ciphertext bytea NOT NULL,
  tag bytea NOT NULL,
  key_id text NOT NULL,
  wrapped_key bytea NOT NULL,
  -- Until when the previous secret signs too (null: there is none).
  previous_until timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX mt_webhook_endpoints_namespace ON mt_webhook_endpoints (namespace) WHERE enabled;

CREATE TABLE mt_webhook_deliveries (
  id uuid PRIMARY KEY,
  endpoint_id uuid NOT NULL REFERENCES mt_webhook_endpoints (id) ON DELETE CASCADE,
  namespace text NOT NULL,
  event_type text NOT NULL,
  -- The exact body sent and signed: {"type", "timestamp", "data"}.
  payload text NOT NULL,
  -- Pending: to be sent (again); Delivered: a 2xx answered; Failed: the last attempt failed and none is left.
  status text NOT NULL DEFAULT 'Pending' CHECK (status IN ('Pending', 'Delivered', 'Failed')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  -- A process sending it holds it until then; past it (the process died), another takes it.
  claimed_until timestamptz,
  last_status integer,
  last_error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  delivered_at timestamptz
);
CREATE INDEX mt_webhook_deliveries_due ON mt_webhook_deliveries (next_attempt_at) WHERE status = 'Pending';
CREATE INDEX mt_webhook_deliveries_endpoint ON mt_webhook_deliveries (endpoint_id, created_at DESC);
