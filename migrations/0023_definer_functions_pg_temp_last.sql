-- 0023: SECURITY DEFINER functions that no object of the caller's can reach, and that find the
-- caller themselves.
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
-- The functions that change evidence on a caller's behalf (closing a delivery, approving and
-- revoking a device key) took the acting key's id from the runtime role: a runtime role (a leaked
-- DATABASE_URL, an injection) could cancel any delivery or approve any device key in the name of
-- any key, at any time. They now take the caller's credential — the bearer token the request
-- authenticated with — hash it as api_keys stores it (SHA-256 of its UTF-8 bytes) and act as the
-- key it belongs to, if that key is live and a dispatcher's or an admin's. The runtime role can
-- read the tokens' digests, never the tokens: without such a token it can close no delivery and
-- change no device key. A closing time must also lie within five minutes of the database's clock
-- (statement_timestamp()): no backdating. The functions that took an id are dropped, grants and
-- all: a replica still on the previous build fails its cancels and approvals until upgraded,
-- rather than keeping the door open.

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

-- The live dispatcher or admin key whose bearer token is `p_credential` (api_keys stores the
-- SHA-256 of its UTF-8 bytes), or an exception under `refusal` naming what it may not do. Called
-- only from the definer functions below, so it runs as their owner; not callable by the runtime role.
CREATE FUNCTION countersign_acting_key(p_credential text, p_may_not text, p_refusal text) RETURNS uuid
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
    acting uuid;
BEGIN
    SELECT k.id INTO acting FROM public.api_keys k
    WHERE k.token_sha256 = sha256(convert_to(p_credential, 'UTF8')) AND k.revoked_at IS NULL AND k.role IN ('dispatcher', 'admin');
    IF acting IS NULL THEN
        RAISE EXCEPTION 'the credential is no live dispatcher or admin key: it may not %', p_may_not
            USING ERRCODE = 'check_violation', CONSTRAINT = p_refusal;
    END IF;
    RETURN acting;
END;
$$;
REVOKE EXECUTE ON FUNCTION countersign_acting_key(text, text, text) FROM PUBLIC;

CREATE FUNCTION countersign_close_delivery(p_reference text, p_status text, p_reason text, p_credential text,
                                           p_closed_at timestamptz)
RETURNS TABLE (id uuid, closed_at timestamptz, closed_by uuid)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
    acting uuid;
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
    acting := public.countersign_acting_key(p_credential, 'close deliveries', 'closing_key_allowed');
    RETURN QUERY
        UPDATE public.deliveries d SET status = p_status, closed_at = p_closed_at, close_reason = p_reason,
            closed_by = acting, updated_at = p_closed_at
        WHERE d.reference = p_reference
        RETURNING d.id, d.closed_at, d.closed_by;
END;
$$;
REVOKE EXECUTE ON FUNCTION countersign_close_delivery(text, text, text, text, timestamptz) FROM PUBLIC;
DROP FUNCTION countersign_close_delivery(text, text, text, uuid, timestamptz);

CREATE FUNCTION countersign_approve_device_key(p_id uuid, p_credential text) RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
    acting uuid;
    current text;
BEGIN
    acting := public.countersign_acting_key(p_credential, 'approve device keys', 'device_key_actor_allowed');
    SELECT k.status INTO current FROM public.device_keys k WHERE k.id = p_id FOR UPDATE;
    IF current IS NULL OR current <> 'registered' THEN
        RETURN current;
    END IF;
    UPDATE public.device_keys SET status = 'approved', approved_by = acting, approved_at = now() WHERE id = p_id;
    RETURN 'approved_now';
END;
$$;
REVOKE EXECUTE ON FUNCTION countersign_approve_device_key(uuid, text) FROM PUBLIC;
DROP FUNCTION countersign_approve_device_key(uuid, uuid);

CREATE FUNCTION countersign_revoke_device_key(p_id uuid, p_credential text) RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
    acting uuid;
    current text;
BEGIN
    acting := public.countersign_acting_key(p_credential, 'revoke device keys', 'device_key_actor_allowed');
    SELECT k.status INTO current FROM public.device_keys k WHERE k.id = p_id FOR UPDATE;
    IF current IS NULL OR current = 'revoked' THEN
        RETURN current;
    END IF;
    UPDATE public.device_keys SET status = 'revoked', revoked_by = acting, revoked_at = now() WHERE id = p_id;
    RETURN 'revoked_now';
END;
$$;
REVOKE EXECUTE ON FUNCTION countersign_revoke_device_key(uuid, text) FROM PUBLIC;
DROP FUNCTION countersign_revoke_device_key(uuid, uuid);

-- The definer functions whose relations were already schema-qualified: only the search_path.
ALTER FUNCTION countersign_revoke_api_key(uuid) SET search_path = pg_catalog, public, pg_temp;
ALTER FUNCTION countersign_release_idempotency(uuid, text) SET search_path = pg_catalog, public, pg_temp;
ALTER FUNCTION countersign_maintain_partitions(text, integer) SET search_path = pg_catalog, public, pg_temp;
ALTER FUNCTION countersign_copy_delivery_search_text() SET search_path = pg_catalog, public, pg_temp;
ALTER FUNCTION countersign_copy_proof_search() SET search_path = pg_catalog, public, pg_temp;
