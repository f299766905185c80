-- 0015: webhooks (Standard Webhooks) with a transactional outbox. See docs/webhooks.md and
-- docs/decisions/0017-webhook-outbox.md.
--
-- webhook_endpoints   the subscriptions admins manage. The signing secret is stored sealed
--                     (AES-256-GCM under WEBHOOK_SECRETS_KEY, bound to the endpoint id); during a
--                     rotation's grace period the previous secret signs too.
-- webhook_events      the outbox: one row per event, INSERTed in the same transaction as the change
--                     it reports, so it exists if and only if that change committed. Never updated.
--                     `payload` is the exact body every subscriber receives (and that is signed).
-- webhook_deliveries  one row per (event, endpoint) subscribed when the event was written: the
--                     sender's work queue (claimed FOR UPDATE SKIP LOCKED, leased by moving
--                     next_attempt_at). Only the sender's bookkeeping columns change.
-- webhook_attempts    one row per HTTP attempt (time, status, latency, error). Insert only.

CREATE TABLE webhook_endpoints (
    id                     uuid PRIMARY KEY,
    url                    text NOT NULL CHECK (length(url) BETWEEN 1 AND 2048),
    description            text NOT NULL DEFAULT '' CHECK (length(description) <= 500),
    events                 text[] NOT NULL CHECK (cardinality(events) BETWEEN 1 AND 16),
    secret_sealed          bytea NOT NULL,
    previous_secret_sealed bytea,
    previous_secret_until  timestamptz,
    enabled                boolean NOT NULL DEFAULT true,
    disabled_reason        text CHECK (disabled_reason IN ('admin', 'failing')),
    disabled_at            timestamptz,
    failing_since          timestamptz,
    created_by             uuid REFERENCES api_keys (id),
    created_at             timestamptz NOT NULL DEFAULT now(),
    updated_at             timestamptz NOT NULL DEFAULT now(),
    deleted_at             timestamptz
);
-- The fan-out at enqueue reads the live subscriptions of one event type.
CREATE INDEX webhook_endpoints_live ON webhook_endpoints USING gin (events) WHERE deleted_at IS NULL;

CREATE TABLE webhook_events (
    id           bigint PRIMARY KEY,
    message_id   uuid NOT NULL UNIQUE,
    type         text NOT NULL CHECK (length(type) BETWEEN 1 AND 64),
    delivery_id  uuid,
    endpoint_id  uuid REFERENCES webhook_endpoints (id),
    occurred_at  timestamptz NOT NULL DEFAULT now(),
    payload      text NOT NULL
);
-- Ids are drawn with nextval() before the insert: the payload carries the id as its `sequence`.
CREATE SEQUENCE webhook_events_id_seq OWNED BY webhook_events.id;
CREATE INDEX webhook_events_delivery ON webhook_events (delivery_id, id) WHERE delivery_id IS NOT NULL;

CREATE TABLE webhook_deliveries (
    id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    event_id         bigint NOT NULL REFERENCES webhook_events (id),
    endpoint_id      uuid NOT NULL REFERENCES webhook_endpoints (id),
    state            text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'succeeded', 'failed')),
    attempts         integer NOT NULL DEFAULT 0,
    next_attempt_at  timestamptz NOT NULL DEFAULT now(),
    last_attempt_at  timestamptz,
    last_status      integer,
    last_error       text,
    created_at       timestamptz NOT NULL DEFAULT now(),
    completed_at     timestamptz,
    UNIQUE (event_id, endpoint_id)
);
-- The sender's claim: due pending rows, oldest first.
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE state = 'pending';
-- The admin listing: an endpoint's deliveries, newest first.
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, created_at DESC, id);

CREATE TABLE webhook_attempts (
    id             bigserial PRIMARY KEY,
    delivery_id    uuid NOT NULL REFERENCES webhook_deliveries (id),
    attempted_at   timestamptz NOT NULL DEFAULT now(),
    status_code    integer,
    latency_ms     integer NOT NULL CHECK (latency_ms >= 0),
    error          text
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id, id);

-- Every sender replica LISTENs on countersign_webhooks; a committed enqueue wakes them at once
-- (NOTIFY is delivered at commit, never for a rolled-back transaction). Polling covers a lost
-- notification.
CREATE FUNCTION countersign_notify_webhook_deliveries() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('countersign_webhooks', '');
    RETURN NULL;
END;
$$;

-- FOR EACH ROW, not statement: an upload nobody subscribes to inserts no row and so sends no
-- notification (a statement trigger would fire for zero rows and take the notify queue's lock
-- at every commit). Notifications with one payload collapse within a transaction.
CREATE TRIGGER webhook_deliveries_queued AFTER INSERT ON webhook_deliveries
    FOR EACH ROW EXECUTE FUNCTION countersign_notify_webhook_deliveries();
