-- 0023: SECURITY DEFINER functions that no object of the caller's can reach, and that take no
-- actor or time the service could not have given.
--
-- A function's `SET search_path = pg_catalog, public` leaves out pg_temp, and PostgreSQL then
-- searches the caller's temporary schema FIRST for tables and views (functions and operators are
-- never looked up there). A caller with TEMP on the database (PUBLIC has it by default) could
-- create `pg_temp.deliveries` with a trigger of its own, call countersign_close_delivery, and run
-- that trigger as the function's owner. Every definer function therefore now:
--   * names every relation with its schema (public.…), and
--   * sets `search_path = pg_catalog, public, pg_temp`: pg_temp named last is searched last.
-- `countersign migrate` also revokes TEMPORARY on the database from PUBLIC and from the runtime
-- role (RuntimeRole.grantScript), and `serve` refuses a role that still has it (DatabaseRoleCheck).
-- ProofStoreTests.DefinerFunctionTests reads pg_proc and fails on any definer function without
-- that search_path or with a relation named without its schema.
--
-- The functions that change evidence on a caller's behalf also check what they are handed:
--   * the acting key (`p_closed_by`, `p_by`) must be a key that exists, is not revoked, and whose
--     role may do the change (dispatcher or admin), so that a runtime role cannot attribute a
--     cancellation or an approval to a courier, an auditor, a revoked key or an id that is no key;
--   * a closing time must be within five minutes of the database's clock (statement_timestamp()),
--     so that a cancellation cannot be backdated (the service passes its own clock's time).
-- What the runtime role can still do (name another live admin or dispatcher key) is found by
-- `verify --database` when no audit event records the change (closure_without_event).

CREATE OR REPLACE FUNCTION countersign_close_delivery(p_reference text, p_status text, p_reason text, p_closed_by uuid,
                                                      p_closed_at timestamptz)
RETURNS TABLE (id uuid, closed_at timestamptz)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
BEGIN
    IF p_status NOT IN ('failed', 'cancelled') THEN
        RAISE EXCEPTION 'a delivery is closed as failed or cancelled, not %', p_status
            USING ERRCODE = 'check_violation', CONSTRAINT = 'delivery_transition';
    END IF;
    IF p_reason IS NULL OR length(p_reason) NOT BETWEEN 1 AND 500 THEN
        RAISE EXCEPTION 'a closing reason is 1 to 500 characters' USING ERRCODE = 'check_violation';
    END IF;
    IF p_closed_at IS NULL OR abs(extract(epoch FROM p_closed_at - statement_timestamp())) > 300 THEN
        RAISE EXCEPTION 'a delivery is closed now, not at % (the database clock reads %)', p_closed_at, statement_timestamp()
            USING ERRCODE = 'check_violation', CONSTRAINT = 'closing_time_now';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM public.api_keys k
                   WHERE k.id = p_closed_by AND k.revoked_at IS NULL AND k.role IN ('dispatcher', 'admin')) THEN
        RAISE EXCEPTION 'key % may not close deliveries: it is no live dispatcher or admin key', p_closed_by
            USING ERRCODE = 'check_violation', CONSTRAINT = 'closing_key_allowed';
    END IF;
    RETURN QUERY
        UPDATE public.deliveries d SET status = p_status, closed_at = p_closed_at, close_reason = p_reason,
            closed_by = p_closed_by, updated_at = p_closed_at
        WHERE d.reference = p_reference
        RETURNING d.id, d.closed_at;
END;
$$;

CREATE OR REPLACE FUNCTION countersign_guard_attempt() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
    current_status text;
    current_reference text;
BEGIN
    SELECT d.status, d.reference INTO current_status, current_reference FROM public.deliveries d
    WHERE d.id = NEW.delivery_id FOR SHARE;
    IF current_status IS DISTINCT FROM 'pending' THEN
        RAISE EXCEPTION 'delivery % is %: no attempt can be recorded', current_reference, current_status
            USING ERRCODE = 'check_violation', CONSTRAINT = 'delivery_transition';
    END IF;
    RETURN NEW;
END;
$$;

CREATE OR REPLACE FUNCTION countersign_guard_signed_proof() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
    key_status text;
    key_owner uuid;
BEGIN
    IF NEW.device_key_id IS NULL THEN
        RETURN NEW;
    END IF;
    SELECT k.status, k.registered_by INTO key_status, key_owner FROM public.device_keys k
    WHERE k.id = NEW.device_key_id FOR SHARE;
    IF key_status IS DISTINCT FROM 'approved' OR key_owner IS DISTINCT FROM NEW.uploaded_by THEN
        RAISE EXCEPTION 'device key % is not an approved key of the uploading key', NEW.device_key_id
            USING ERRCODE = 'check_violation', CONSTRAINT = 'device_key_not_usable';
    END IF;
    RETURN NEW;
END;
$$;

CREATE OR REPLACE FUNCTION countersign_approve_device_key(p_id uuid, p_by uuid) RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
    current text;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM public.api_keys a
                   WHERE a.id = p_by AND a.revoked_at IS NULL AND a.role IN ('dispatcher', 'admin')) THEN
        RAISE EXCEPTION 'key % may not approve device keys: it is no live dispatcher or admin key', p_by
            USING ERRCODE = 'check_violation', CONSTRAINT = 'device_key_actor_allowed';
    END IF;
    SELECT k.status INTO current FROM public.device_keys k WHERE k.id = p_id FOR UPDATE;
    IF current IS NULL OR current <> 'registered' THEN
        RETURN current;
    END IF;
    UPDATE public.device_keys SET status = 'approved', approved_by = p_by, approved_at = now() WHERE id = p_id;
    RETURN 'approved_now';
END;
$$;

CREATE OR REPLACE FUNCTION countersign_revoke_device_key(p_id uuid, p_by uuid) RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
    current text;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM public.api_keys a
                   WHERE a.id = p_by AND a.revoked_at IS NULL AND a.role IN ('dispatcher', 'admin')) THEN
        RAISE EXCEPTION 'key % may not revoke device keys: it is no live dispatcher or admin key', p_by
            USING ERRCODE = 'check_violation', CONSTRAINT = 'device_key_actor_allowed';
    END IF;
    SELECT k.status INTO current FROM public.device_keys k WHERE k.id = p_id FOR UPDATE;
    IF current IS NULL OR current = 'revoked' THEN
        RETURN current;
    END IF;
    UPDATE public.device_keys SET status = 'revoked', revoked_by = p_by, revoked_at = now() WHERE id = p_id;
    RETURN 'revoked_now';
END;
$$;

-- The definer functions whose relations were already schema-qualified: only the search_path.
ALTER FUNCTION countersign_revoke_api_key(uuid) SET search_path = pg_catalog, public, pg_temp;
ALTER FUNCTION countersign_release_idempotency(uuid, text) SET search_path = pg_catalog, public, pg_temp;
ALTER FUNCTION countersign_maintain_partitions(text, integer) SET search_path = pg_catalog, public, pg_temp;
ALTER FUNCTION countersign_copy_delivery_search_text() SET search_path = pg_catalog, public, pg_temp;
ALTER FUNCTION countersign_copy_proof_search() SET search_path = pg_catalog, public, pg_temp;
