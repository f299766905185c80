-- 0027: a retention policy the database enforces (issue 43, item 3; docs/decisions/0046-retention.md).
--
-- The deployment's policy (`RETENTION_DAYS`, written by `countersign migrate` as the owner) lives in
-- a one-row table the runtime role can only read. The serving replicas' retention job calls
-- countersign_erase_expired, which erases only what that policy makes due: deliveries created more
-- than `days` days ago, no longer pending, not under a legal hold, not erased yet — so the runtime
-- role, which can call it at any time, can bring an erasure forward by no more than the job's own
-- interval, and can choose neither the deliveries nor the rule. The erasure itself is 0026's, moved
-- into one function both callers share; the caller appends each `delivery_erased` event in the same
-- transaction (one without its event is `erasure_without_event` in verification).

CREATE TABLE retention_policy (
    only_row   boolean PRIMARY KEY DEFAULT true CONSTRAINT retention_policy_one_row CHECK (only_row),
    -- NULL: kept until erased on request.
    days       integer CONSTRAINT retention_policy_days CHECK (days BETWEEN 1 AND 36500),
    changed_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO retention_policy (days) VALUES (NULL);

-- The deliveries the policy may make due, oldest first; erased rows leave it. created_at is the
-- clock (a delivery's hand-over is hours or days after it, a policy is months or years).
CREATE INDEX deliveries_retention ON deliveries (created_at) WHERE erased_at IS NULL;

-- 0026's erasure of one delivery, for both callers: everything but the audit event. Not callable by
-- the runtime role (it is no SECURITY DEFINER: the definer functions run it as the owner).
CREATE FUNCTION countersign_erase_personal_data(p_delivery uuid, p_seq bigint, p_reference text, p_rule text, p_acting uuid)
RETURNS void
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
    reference_path text := '/v1/deliveries/' || p_reference;
BEGIN
    UPDATE public.deliveries d SET recipient_name = NULL, address = NULL, destination_lat = NULL, destination_lon = NULL,
        close_reason = NULL, erased_at = now(), erased_by = p_acting, erasure_rule = p_rule, updated_at = now()
    WHERE d.id = p_delivery;
    UPDATE public.proofs p SET signer_name = NULL, location_lat = NULL, location_lon = NULL, location_accuracy_m = NULL,
        device_id = NULL, device_model = NULL, device_os = NULL, device_app = NULL, body = '\x', ink = '\x', png = '\x',
        sealing = 2
    WHERE p.delivery_id = p_delivery;
    UPDATE public.delivery_attempts a SET note = NULL, location_lat = NULL, location_lon = NULL, location_accuracy_m = NULL
    WHERE a.delivery_id = p_delivery;
    DELETE FROM public.delivery_data_keys k WHERE k.delivery_id = p_delivery;
    DELETE FROM public.proof_search s WHERE s.delivery_seq = p_seq;
    -- Payloads quote names, addresses, notes and reasons: what is still to be sent says only that
    -- the delivery was erased.
    UPDATE public.webhook_events w
    SET payload = jsonb_set(w.payload::jsonb, '{data}', jsonb_build_object('reference', p_reference, 'erased', true))::text
    WHERE w.delivery_id = p_delivery AND w.type <> 'delivery.delivered';
    -- A stored answer replayed to a retry quotes the same facts; such a retry is answered afresh.
    DELETE FROM public.idempotency_records r
    WHERE r.response_location = reference_path OR starts_with(r.response_location, reference_path || '/');
END;
$$;
REVOKE EXECUTE ON FUNCTION countersign_erase_personal_data(uuid, bigint, text, text, uuid) FROM PUBLIC;

-- 0026's function, answering as before, erasing through the shared function.
CREATE OR REPLACE FUNCTION countersign_erase_delivery(p_reference text, p_credential text)
RETURNS TABLE (delivery_id uuid, outcome text, erased_at timestamptz, erased_by uuid)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
    acting uuid;
    target record;
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
    PERFORM public.countersign_erase_personal_data(target.id, target.seq, p_reference, 'request', acting);
    RETURN QUERY SELECT target.id, 'erased_now'::text, now(), acting;
END;
$$;
REVOKE EXECUTE ON FUNCTION countersign_erase_delivery(text, text) FROM PUBLIC;

-- Erases up to `p_limit` (at most 1,000) deliveries the policy makes due, oldest first, and names
-- them; none without a policy. Rows another transaction holds (an upload, a hold being set, another
-- replica's job) are skipped, not waited for: the next run takes them.
CREATE FUNCTION countersign_erase_expired(p_limit integer)
RETURNS TABLE (delivery_id uuid, reference text, created_at timestamptz, days integer)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
    policy integer;
    target record;
BEGIN
    SELECT r.days INTO policy FROM public.retention_policy r;
    IF policy IS NULL THEN
        RETURN;
    END IF;
    FOR target IN
        SELECT d.id, d.seq, d.reference::text AS reference, d.created_at FROM public.deliveries d
        WHERE d.erased_at IS NULL AND d.created_at < now() - make_interval(days => policy) AND d.status <> 'pending'
          AND NOT EXISTS (SELECT 1 FROM public.delivery_legal_holds h WHERE h.delivery_id = d.id)
        ORDER BY d.created_at
        LIMIT least(greatest(p_limit, 0), 1000)
        FOR UPDATE OF d SKIP LOCKED
    LOOP
        -- A hold committed after this statement's snapshot but before the row lock: the lock does
        -- not re-check the condition (the hold changed no delivery row), this new snapshot does.
        CONTINUE WHEN EXISTS (SELECT 1 FROM public.delivery_legal_holds h WHERE h.delivery_id = target.id);
        PERFORM public.countersign_erase_personal_data(target.id, target.seq, target.reference, 'retention', NULL);
        RETURN QUERY SELECT target.id, target.reference, target.created_at, policy;
    END LOOP;
END;
$$;
REVOKE EXECUTE ON FUNCTION countersign_erase_expired(integer) FROM PUBLIC;
