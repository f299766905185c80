-- 0014: a delivery's whole life. `pending → delivered | failed | cancelled`, failed attempts
-- recorded (append-only) while it is pending, and every illegal transition refused here, by the
-- database, whoever sends the SQL (docs/decisions/0023-delivery-lifecycle.md).
--
-- `failed` is terminal, like `cancelled`: a dispatcher gives a delivery up (returned to sender)
-- after its attempts. A failed attempt leaves the delivery `pending`, so it can still be attempted
-- again, delivered, given up or cancelled.
--
-- Illegal transitions raise SQLSTATE 23514 (check_violation) naming the constraint
-- `delivery_transition`, so a caller can tell them from every other refusal without parsing text.

ALTER DOMAIN delivery_status DROP CONSTRAINT delivery_status_known;
ALTER DOMAIN delivery_status ADD CONSTRAINT delivery_status_known
    CHECK (VALUE IN ('pending', 'delivered', 'failed', 'cancelled'));

-- How a closed (failed or cancelled) delivery ended: when, why and by which key. Nullable columns
-- added without a default: no table rewrite.
ALTER TABLE deliveries
    ADD COLUMN closed_at    timestamptz,
    ADD COLUMN close_reason text,
    ADD COLUMN closed_by    uuid REFERENCES api_keys (id);
ALTER TABLE deliveries ADD CONSTRAINT deliveries_closed_facts
    CHECK ((status IN ('failed', 'cancelled')) = (closed_at IS NOT NULL AND close_reason IS NOT NULL));

-- Replaces 0002's guard: still no DELETE, no way back from delivered, no change of identity; and
-- now a closed delivery is frozen (no second cancel), and only a pending delivery changes status.
CREATE OR REPLACE FUNCTION countersign_guard_delivery() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION 'DELETE on deliveries is not allowed' USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF OLD.status = 'delivered' AND NEW.status = 'pending' THEN
        RAISE EXCEPTION 'a delivered delivery cannot go back to %', NEW.status USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF NEW.id <> OLD.id OR NEW.reference <> OLD.reference OR NEW.seq <> OLD.seq THEN
        RAISE EXCEPTION 'a delivery''s id, reference and seq never change' USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF OLD.status IN ('failed', 'cancelled') THEN
        RAISE EXCEPTION 'delivery % is %: it cannot change any more', OLD.reference, OLD.status
            USING ERRCODE = 'check_violation', CONSTRAINT = 'delivery_transition';
    END IF;
    IF NEW.status <> OLD.status AND OLD.status <> 'pending' THEN
        RAISE EXCEPTION 'delivery % cannot go from % to %', OLD.reference, OLD.status, NEW.status
            USING ERRCODE = 'check_violation', CONSTRAINT = 'delivery_transition';
    END IF;
    RETURN NEW;
END;
$$;

-- Closes a pending delivery as `failed` or `cancelled`: the one way the service ends a delivery
-- without a proof. SECURITY DEFINER so the runtime role needs EXECUTE here, not UPDATE on
-- deliveries; the guard above refuses a delivery that is not pending. Returns the closed row's
-- id, reference and closed_at (no row: no such reference).
CREATE FUNCTION countersign_close_delivery(p_reference text, p_status text, p_reason text, p_closed_by uuid,
                                           p_closed_at timestamptz)
RETURNS TABLE (id uuid, closed_at timestamptz)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
BEGIN
    IF p_status NOT IN ('failed', 'cancelled') THEN
        RAISE EXCEPTION 'a delivery is closed as failed or cancelled, not %', p_status
            USING ERRCODE = 'check_violation', CONSTRAINT = 'delivery_transition';
    END IF;
    IF p_reason IS NULL OR length(p_reason) NOT BETWEEN 1 AND 500 THEN
        RAISE EXCEPTION 'a closing reason is 1 to 500 characters' USING ERRCODE = 'check_violation';
    END IF;
    RETURN QUERY
        UPDATE deliveries d SET status = p_status, closed_at = p_closed_at, close_reason = p_reason, closed_by = p_closed_by,
            updated_at = p_closed_at
        WHERE d.reference = p_reference
        RETURNING d.id, d.closed_at;
END;
$$;

CREATE DOMAIN attempt_reason AS text
    CONSTRAINT attempt_reason_known
    CHECK (VALUE IN ('recipient_absent', 'refused', 'address_not_found', 'access_denied', 'damaged', 'other'));

-- Failed delivery attempts: append-only evidence, like proofs. `seq` orders a delivery's attempts.
CREATE TABLE delivery_attempts (
    id                        uuid PRIMARY KEY,
    seq                       bigint GENERATED ALWAYS AS IDENTITY,
    delivery_id               uuid NOT NULL REFERENCES deliveries (id),
    outcome                   text NOT NULL CHECK (outcome = 'failed'),
    reason                    attempt_reason NOT NULL,
    note                      text,
    captured_at               timestamptz NOT NULL,
    captured_at_offset_min    utc_offset_minutes NOT NULL,
    captured_at_text          text NOT NULL,
    received_at               timestamptz NOT NULL,
    location_lat              latitude_degrees,
    location_lon              longitude_degrees,
    location_accuracy_m       non_negative_metres,
    distance_to_destination_m non_negative_metres,
    geofence_radius_m         double precision NOT NULL,
    flags                     text[] NOT NULL DEFAULT '{}',
    recorded_by               uuid NOT NULL REFERENCES api_keys (id),
    idempotency_key           text,
    CHECK ((location_lat IS NULL) = (location_lon IS NULL))
);
-- A delivery's attempts, in order (GET delivery), and the search by reason.
CREATE INDEX delivery_attempts_delivery ON delivery_attempts (delivery_id, seq);
CREATE INDEX delivery_attempts_reason ON delivery_attempts (reason, delivery_id);

CREATE TRIGGER delivery_attempts_immutable BEFORE UPDATE OR DELETE ON delivery_attempts
    FOR EACH ROW EXECUTE FUNCTION countersign_refuse_change();
CREATE TRIGGER delivery_attempts_no_truncate BEFORE TRUNCATE ON delivery_attempts
    FOR EACH STATEMENT EXECUTE FUNCTION countersign_refuse_change();

-- An attempt only on a pending delivery. The delivery row is locked FOR SHARE, so an attempt and a
-- concurrent proof upload or cancel (which update that row) are serialised and the later one sees
-- the other's status. SECURITY DEFINER because FOR SHARE needs UPDATE privilege on deliveries,
-- which the runtime role will not have.
CREATE FUNCTION countersign_guard_attempt() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
DECLARE
    current_status text;
    current_reference text;
BEGIN
    SELECT d.status, d.reference INTO current_status, current_reference FROM deliveries d WHERE d.id = NEW.delivery_id FOR SHARE;
    IF current_status IS DISTINCT FROM 'pending' THEN
        RAISE EXCEPTION 'delivery % is %: no attempt can be recorded', current_reference, current_status
            USING ERRCODE = 'check_violation', CONSTRAINT = 'delivery_transition';
    END IF;
    RETURN NEW;
END;
$$;
CREATE TRIGGER delivery_attempts_pending_only BEFORE INSERT ON delivery_attempts
    FOR EACH ROW EXECUTE FUNCTION countersign_guard_attempt();
