-- 0026: erasing one delivery's personal data without touching the audit chain, and a legal hold
-- that forbids it (issue 43, docs/decisions/0044-erasure.md).
--
-- Erasure crypto-shreds the delivery's data key (the only copy of the key its proofs' body, ink
-- and PNG were sealed with, 0025) and removes every clear copy of a personal fact: the recipient's
-- name, the address and destination, the closing reason; each proof's signer, hand-over location,
-- device facts and (now unreadable) sealed bytes; each failed attempt's note and location; the
-- search rows; the webhook payloads that quote them; the stored answers a retry would get again.
-- What stays is what the chain vouches for and what no one can read a person from: the reference,
-- status and times, flags, distances, counts and digests. The audit events are never changed: the
-- erasure is one more event of the delivery's chain (written by the service in the same
-- transaction), and the verifier reports the delivery as erased instead of re-deriving its facts.
--
-- Only one function does it, as the live admin key whose token it is given (0023's rule: the
-- runtime role alone erases nothing). The tables' guards admit exactly the erasure's change and
-- nothing else: `deliveries.erased_at` is set once, never cleared, and an erased row never changes
-- again; a proof or attempt changes only into its erased form, and only under an erased delivery.
--
-- Columns are added without defaults and constraints NOT VALID: the catalog alone, no rewrite or
-- scan of `deliveries` or `proofs` (every row already satisfies them; new writes are checked).

ALTER TABLE deliveries
    ADD COLUMN erased_at    timestamptz,
    ADD COLUMN erased_by    uuid,
    ADD COLUMN erasure_rule text;
ALTER TABLE deliveries ALTER COLUMN recipient_name DROP NOT NULL, ALTER COLUMN address DROP NOT NULL;
ALTER TABLE deliveries ADD CONSTRAINT deliveries_erased_facts CHECK (
    (erased_at IS NULL) = (erasure_rule IS NULL)
    AND erasure_rule IN ('request', 'retention')
    AND (erased_at IS NOT NULL OR (recipient_name IS NOT NULL AND address IS NOT NULL))) NOT VALID;
ALTER TABLE deliveries DROP CONSTRAINT deliveries_closed_facts;
ALTER TABLE deliveries ADD CONSTRAINT deliveries_closed_facts CHECK (
    (status IN ('failed', 'cancelled')) = (closed_at IS NOT NULL AND (close_reason IS NOT NULL OR erased_at IS NOT NULL))) NOT VALID;

ALTER TABLE proofs ALTER COLUMN signer_name DROP NOT NULL;

-- proofs.sealing 2: erased. body, ink and png are empty; body_sha256 and png_sha256 still say what
-- they held.
ALTER DOMAIN proof_sealing DROP CONSTRAINT proof_sealing_known;
ALTER DOMAIN proof_sealing ADD CONSTRAINT proof_sealing_known CHECK (VALUE IN (0, 1, 2)) NOT VALID;

-- A legal hold keeps a delivery's data whatever the retention policy or an erasure request says
-- (GDPR Art. 17(3)(e)). Set and cleared by an admin or auditor through the functions below, each
-- change an audit event; the runtime role only reads.
CREATE TABLE delivery_legal_holds (
    delivery_id uuid PRIMARY KEY REFERENCES deliveries (id),
    reason      text NOT NULL CONSTRAINT delivery_legal_holds_reason CHECK (length(reason) BETWEEN 1 AND 200),
    held_by     uuid NOT NULL REFERENCES api_keys (id),
    held_at     timestamptz NOT NULL DEFAULT now()
);

-- The live key with one of `p_roles` whose bearer token is `p_credential`, or an exception under
-- `p_refusal`: 0023's countersign_acting_key for other roles than a dispatcher's or an admin's.
CREATE FUNCTION countersign_acting_key_in(p_credential text, p_roles text[], p_may_not text, p_refusal text) RETURNS uuid
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
    acting uuid;
BEGIN
    SELECT k.id INTO acting FROM public.api_keys k
    WHERE k.token_sha256 = sha256(convert_to(p_credential, 'UTF8')) AND k.revoked_at IS NULL AND k.role = ANY (p_roles);
    IF acting IS NULL THEN
        RAISE EXCEPTION 'the credential is no live % key: it may not %', array_to_string(p_roles, ' or '), p_may_not
            USING ERRCODE = 'check_violation', CONSTRAINT = p_refusal;
    END IF;
    RETURN acting;
END;
$$;
REVOKE EXECUTE ON FUNCTION countersign_acting_key_in(text, text[], text, text) FROM PUBLIC;

-- Replaces 0014's guard. The erasure's update is the one change an erased or closed delivery
-- admits; after it the row never changes again. Like 0014's, it sets no search_path: it runs on
-- every upload's status update, a SET clause would save and restore the setting on each call, and
-- it names no relation (to_jsonb is pg_catalog's, which is always searched first).
CREATE OR REPLACE FUNCTION countersign_guard_delivery() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    erasable constant text[] := ARRAY['recipient_name', 'address', 'destination_lat', 'destination_lon', 'destination',
                                      'close_reason', 'erased_at', 'erased_by', 'erasure_rule', 'updated_at'];
BEGIN
    IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION 'DELETE on deliveries is not allowed' USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF OLD.erased_at IS NOT NULL THEN
        RAISE EXCEPTION 'delivery % is erased: it cannot change any more', OLD.reference
            USING ERRCODE = 'check_violation', CONSTRAINT = 'delivery_erased';
    END IF;
    IF NEW.erased_at IS NOT NULL THEN
        IF (to_jsonb(NEW) - erasable) IS DISTINCT FROM (to_jsonb(OLD) - erasable)
           OR NEW.recipient_name IS NOT NULL OR NEW.address IS NOT NULL OR NEW.destination_lat IS NOT NULL
           OR NEW.destination_lon IS NOT NULL OR NEW.close_reason IS NOT NULL THEN
            RAISE EXCEPTION 'erasing delivery % may only remove its personal facts', OLD.reference
                USING ERRCODE = 'insufficient_privilege';
        END IF;
        RETURN NEW;
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

-- The guard of a table whose rows belong to a delivery (delivery_id) and are evidence: no change,
-- except the erasure's, under an erased delivery. TG_ARGV[0] is the erased form as JSON: the
-- updated row must be the old one with exactly those members replaced. TG_ARGV[1] = 'delete'
-- lets the erasure delete the row instead (a data key).
CREATE FUNCTION countersign_guard_erasure() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, public, pg_temp SET bytea_output = 'hex' AS $$
DECLARE
    erased boolean;
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        SELECT d.erased_at IS NOT NULL INTO erased FROM public.deliveries d WHERE d.id = OLD.delivery_id;
        IF erased THEN
            IF TG_OP = 'DELETE' AND TG_ARGV[1] = 'delete' THEN
                RETURN OLD;
            END IF;
            IF TG_OP = 'UPDATE' AND TG_ARGV[1] <> 'delete'
               AND to_jsonb(NEW) = to_jsonb(OLD) || TG_ARGV[0]::jsonb THEN
                RETURN NEW;
            END IF;
        END IF;
    END IF;
    RAISE EXCEPTION '% on % is not allowed', TG_OP, TG_TABLE_NAME USING ERRCODE = 'insufficient_privilege';
END;
$$;

DROP TRIGGER proofs_immutable ON proofs;
CREATE TRIGGER proofs_immutable BEFORE UPDATE OR DELETE ON proofs
    FOR EACH ROW EXECUTE FUNCTION countersign_guard_erasure(
        '{"signer_name": null, "location_lat": null, "location_lon": null, "location_accuracy_m": null, "device_id": null,
          "device_model": null, "device_os": null, "device_app": null, "body": "\\x", "ink": "\\x", "png": "\\x", "sealing": 2}',
        'update');
DROP TRIGGER delivery_attempts_immutable ON delivery_attempts;
CREATE TRIGGER delivery_attempts_immutable BEFORE UPDATE OR DELETE ON delivery_attempts
    FOR EACH ROW EXECUTE FUNCTION countersign_guard_erasure(
        '{"note": null, "location_lat": null, "location_lon": null, "location_accuracy_m": null}', 'update');
DROP TRIGGER delivery_data_keys_immutable ON delivery_data_keys;
CREATE TRIGGER delivery_data_keys_immutable BEFORE UPDATE OR DELETE ON delivery_data_keys
    FOR EACH ROW EXECUTE FUNCTION countersign_guard_erasure('{}', 'delete');

-- 0021's copy, and an erased delivery's search row is deleted rather than emptied.
CREATE OR REPLACE FUNCTION countersign_copy_delivery_search_text() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
BEGIN
    IF NEW.erased_at IS NOT NULL THEN
        DELETE FROM public.delivery_search_text t WHERE t.delivery_id = NEW.id;
        RETURN NULL;
    END IF;
    INSERT INTO public.delivery_search_text (delivery_id, seq, reference, recipient_name, address)
    VALUES (NEW.id, NEW.seq, NEW.reference, NEW.recipient_name, NEW.address)
    ON CONFLICT (delivery_id) DO UPDATE SET recipient_name = EXCLUDED.recipient_name, address = EXCLUDED.address;
    RETURN NULL;
END;
$$;

-- Sets a legal hold on the delivery `p_reference` as the admin or auditor key of `p_credential`.
-- outcome: 'held_now', 'already_held' (the hold kept as it was), 'erased' (nothing left to hold);
-- no row: no such delivery.
CREATE FUNCTION countersign_set_legal_hold(p_reference text, p_reason text, p_credential text)
RETURNS TABLE (delivery_id uuid, outcome text, held_by uuid, held_at timestamptz)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
    acting uuid;
    target record;
    existing record;
BEGIN
    acting := public.countersign_acting_key_in(p_credential, ARRAY['admin', 'auditor'], 'set legal holds', 'legal_hold_key_allowed');
    IF p_reason IS NULL OR length(p_reason) NOT BETWEEN 1 AND 200 THEN
        RAISE EXCEPTION 'a hold''s reason is 1 to 200 characters' USING ERRCODE = 'check_violation',
            CONSTRAINT = 'delivery_legal_holds_reason';
    END IF;
    SELECT d.id, d.erased_at INTO target FROM public.deliveries d WHERE d.reference = p_reference FOR UPDATE;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    IF target.erased_at IS NOT NULL THEN
        RETURN QUERY SELECT target.id, 'erased'::text, NULL::uuid, NULL::timestamptz;
        RETURN;
    END IF;
    SELECT h.held_by, h.held_at INTO existing FROM public.delivery_legal_holds h WHERE h.delivery_id = target.id;
    IF FOUND THEN
        RETURN QUERY SELECT target.id, 'already_held'::text, existing.held_by, existing.held_at;
        RETURN;
    END IF;
    INSERT INTO public.delivery_legal_holds (delivery_id, reason, held_by) VALUES (target.id, p_reason, acting);
    RETURN QUERY SELECT target.id, 'held_now'::text, acting, now();
END;
$$;
REVOKE EXECUTE ON FUNCTION countersign_set_legal_hold(text, text, text) FROM PUBLIC;

-- Clears the hold of `p_reference`. outcome: 'cleared_now' or 'not_held'; no row: no such delivery.
CREATE FUNCTION countersign_clear_legal_hold(p_reference text, p_credential text)
RETURNS TABLE (delivery_id uuid, outcome text)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
    target uuid;
BEGIN
    PERFORM public.countersign_acting_key_in(p_credential, ARRAY['admin', 'auditor'], 'clear legal holds', 'legal_hold_key_allowed');
    SELECT d.id INTO target FROM public.deliveries d WHERE d.reference = p_reference FOR UPDATE;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    DELETE FROM public.delivery_legal_holds h WHERE h.delivery_id = target;
    RETURN QUERY SELECT target, CASE WHEN FOUND THEN 'cleared_now' ELSE 'not_held' END;
END;
$$;
REVOKE EXECUTE ON FUNCTION countersign_clear_legal_hold(text, text) FROM PUBLIC;

-- Erases the delivery `p_reference` on request, as the live admin key of `p_credential`.
-- outcome: 'erased_now'; 'already_erased' (erased_at and erased_by of the first erasure);
-- 'pending' (a pending delivery is cancelled first: an erased delivery can never be completed);
-- 'held' (under a legal hold: nothing changed). No row: no such delivery. The caller appends the
-- `delivery_erased` event in the same transaction.
CREATE FUNCTION countersign_erase_delivery(p_reference text, p_credential text)
RETURNS TABLE (delivery_id uuid, outcome text, erased_at timestamptz, erased_by uuid)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
    acting uuid;
    target record;
    reference_path text := '/v1/deliveries/' || p_reference;
BEGIN
    acting := public.countersign_acting_key_in(p_credential, ARRAY['admin'], 'erase deliveries', 'erasure_key_allowed');
    SELECT d.id, d.seq, d.status, d.erased_at, d.erased_by INTO target FROM public.deliveries d
    WHERE d.reference = p_reference FOR UPDATE;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    IF target.erased_at IS NOT NULL THEN
        RETURN QUERY SELECT target.id, 'already_erased'::text, target.erased_at, target.erased_by;
        RETURN;
    END IF;
    IF target.status = 'pending' THEN
        RETURN QUERY SELECT target.id, 'pending'::text, NULL::timestamptz, NULL::uuid;
        RETURN;
    END IF;
    IF EXISTS (SELECT 1 FROM public.delivery_legal_holds h WHERE h.delivery_id = target.id) THEN
        RETURN QUERY SELECT target.id, 'held'::text, NULL::timestamptz, NULL::uuid;
        RETURN;
    END IF;
    UPDATE public.deliveries d SET recipient_name = NULL, address = NULL, destination_lat = NULL, destination_lon = NULL,
        close_reason = NULL, erased_at = now(), erased_by = acting, erasure_rule = 'request', updated_at = now()
    WHERE d.id = target.id;
    UPDATE public.proofs p SET signer_name = NULL, location_lat = NULL, location_lon = NULL, location_accuracy_m = NULL,
        device_id = NULL, device_model = NULL, device_os = NULL, device_app = NULL, body = '\x', ink = '\x', png = '\x',
        sealing = 2
    WHERE p.delivery_id = target.id;
    UPDATE public.delivery_attempts a SET note = NULL, location_lat = NULL, location_lon = NULL, location_accuracy_m = NULL
    WHERE a.delivery_id = target.id;
    DELETE FROM public.delivery_data_keys k WHERE k.delivery_id = target.id;
    DELETE FROM public.proof_search s WHERE s.delivery_seq = target.seq;
    -- Payloads quote names, addresses, notes and reasons: what is still to be sent says only that
    -- the delivery was erased.
    UPDATE public.webhook_events w
    SET payload = jsonb_set(w.payload::jsonb, '{data}', jsonb_build_object('reference', p_reference, 'erased', true))::text
    WHERE w.delivery_id = target.id AND w.type <> 'delivery.delivered';
    -- A stored answer replayed to a retry quotes the same facts; such a retry is answered afresh.
    DELETE FROM public.idempotency_records r
    WHERE r.response_location = reference_path OR starts_with(r.response_location, reference_path || '/');
    RETURN QUERY SELECT target.id, 'erased_now'::text, now(), acting;
END;
$$;
REVOKE EXECUTE ON FUNCTION countersign_erase_delivery(text, text) FROM PUBLIC;
