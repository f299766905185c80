-- 0002: proof of delivery. API keys, deliveries, proofs (immutable) and idempotency records.

-- API keys. The token is shown once by `countersign keys create`; only its SHA-256 is kept.
CREATE TABLE api_keys (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name         text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    role         text NOT NULL CHECK (role IN ('courier', 'dispatcher', 'auditor', 'admin')),
    token_sha256 bytea NOT NULL CHECK (length(token_sha256) = 32),
    created_at   timestamptz NOT NULL DEFAULT now(),
    revoked_at   timestamptz
);
-- Authentication looks a key up by its hash on every request.
CREATE UNIQUE INDEX api_keys_token_sha256 ON api_keys (token_sha256);

-- Deliveries. `seq` orders listings (keyset pagination, newest first, stable under inserts).
CREATE TABLE deliveries (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    seq             bigint GENERATED ALWAYS AS IDENTITY,
    reference       text NOT NULL CHECK (length(reference) BETWEEN 1 AND 64),
    recipient_name  text NOT NULL,
    address         text NOT NULL,
    destination_lat double precision CHECK (destination_lat BETWEEN -90 AND 90),
    destination_lon double precision CHECK (destination_lon >= -180 AND destination_lon < 180),
    status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered')),
    created_by      uuid REFERENCES api_keys (id),
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    delivered_at    timestamptz,
    CHECK ((destination_lat IS NULL) = (destination_lon IS NULL)),
    CHECK ((status = 'delivered') = (delivered_at IS NOT NULL))
);
CREATE UNIQUE INDEX deliveries_reference ON deliveries (reference);
CREATE UNIQUE INDEX deliveries_seq ON deliveries (seq DESC);
CREATE INDEX deliveries_status_seq ON deliveries (status, seq DESC);
CREATE INDEX deliveries_created_at ON deliveries (created_at);
CREATE INDEX deliveries_destination ON deliveries (destination_lat, destination_lon) WHERE destination_lat IS NOT NULL;

-- A delivered delivery never goes back to pending, and its identity never changes.
CREATE FUNCTION countersign_guard_delivery() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION 'DELETE on deliveries is not allowed' USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF OLD.status = 'delivered' AND NEW.status <> 'delivered' THEN
        RAISE EXCEPTION 'a delivered delivery cannot go back to %', NEW.status USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF NEW.id <> OLD.id OR NEW.reference <> OLD.reference OR NEW.seq <> OLD.seq THEN
        RAISE EXCEPTION 'a delivery''s id, reference and seq never change' USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN NEW;
END;
$$;
CREATE TRIGGER deliveries_guard BEFORE UPDATE OR DELETE ON deliveries
    FOR EACH ROW EXECUTE FUNCTION countersign_guard_delivery();

-- Proofs: one per delivery, immutable once stored. The original request body is kept byte for
-- byte as bytea (lz4: fast, and points stored as jsonb cost 5-10x per insert); the PNG is
-- already deflated, so it is stored without a second compression attempt.
CREATE TABLE proofs (
    id                        uuid PRIMARY KEY,
    delivery_id               uuid NOT NULL REFERENCES deliveries (id),
    signer_name               text NOT NULL,
    captured_at               timestamptz NOT NULL,
    captured_at_offset_min    integer NOT NULL CHECK (captured_at_offset_min BETWEEN -1080 AND 1080),
    captured_at_text          text NOT NULL,
    received_at               timestamptz NOT NULL,
    location_lat              double precision CHECK (location_lat BETWEEN -90 AND 90),
    location_lon              double precision CHECK (location_lon >= -180 AND location_lon < 180),
    location_accuracy_m       double precision CHECK (location_accuracy_m >= 0),
    distance_to_destination_m double precision CHECK (distance_to_destination_m >= 0),
    geofence_radius_m         double precision NOT NULL,
    flags                     text[] NOT NULL DEFAULT '{}',
    device_id                 text,
    device_model              text,
    device_os                 text,
    device_app                text,
    body                      bytea NOT NULL,
    body_content_type         text NOT NULL,
    body_content_encoding     text,
    body_sha256               bytea NOT NULL CHECK (length(body_sha256) = 32),
    ink_format                text NOT NULL,
    ink                       bytea NOT NULL,
    point_count               integer NOT NULL,
    stroke_count              integer NOT NULL,
    png                       bytea NOT NULL,
    png_sha256                bytea NOT NULL CHECK (length(png_sha256) = 32),
    png_width                 integer NOT NULL,
    png_height                integer NOT NULL,
    render_options            jsonb NOT NULL,
    algorithm_version         text NOT NULL,
    uploaded_by               uuid NOT NULL REFERENCES api_keys (id),
    idempotency_key           text,
    CHECK ((location_lat IS NULL) = (location_lon IS NULL))
);
ALTER TABLE proofs ALTER COLUMN body SET COMPRESSION lz4;
ALTER TABLE proofs ALTER COLUMN ink SET COMPRESSION lz4;
ALTER TABLE proofs ALTER COLUMN png SET STORAGE EXTERNAL;
-- One accepted proof per delivery: concurrent uploads race here and exactly one wins.
CREATE UNIQUE INDEX proofs_delivery_id ON proofs (delivery_id);

CREATE TRIGGER proofs_immutable BEFORE UPDATE OR DELETE ON proofs
    FOR EACH ROW EXECUTE FUNCTION countersign_refuse_change();
CREATE TRIGGER proofs_no_truncate BEFORE TRUNCATE ON proofs
    FOR EACH STATEMENT EXECUTE FUNCTION countersign_refuse_change();

-- Idempotency records, scoped per API key. `in_flight` while the first request runs; completed
-- with the response to replay. Completed in the same transaction as the proof it answers.
CREATE TABLE idempotency_records (
    api_key_id      uuid NOT NULL REFERENCES api_keys (id),
    idempotency_key text NOT NULL CHECK (length(idempotency_key) BETWEEN 1 AND 255),
    request_sha256  bytea NOT NULL CHECK (length(request_sha256) = 32),
    state           text NOT NULL CHECK (state IN ('in_flight', 'completed')),
    response_status integer,
    response_type   text,
    response_location text,
    response_body   bytea,
    created_at      timestamptz NOT NULL DEFAULT now(),
    completed_at    timestamptz,
    PRIMARY KEY (api_key_id, idempotency_key)
);
CREATE INDEX idempotency_records_created_at ON idempotency_records (created_at);
