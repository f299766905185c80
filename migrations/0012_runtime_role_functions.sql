-- 0012: the few writes the runtime role may do beyond INSERT, as narrow SECURITY DEFINER functions.
--
-- The service serves as a runtime role that owns nothing (docs/decisions/0017-two-database-roles.md):
-- `countersign migrate`, as the owner, grants it what RuntimeRolePrivileges lists, after every
-- migration. Where serving needs more than an INSERT or a guarded column UPDATE, it calls one of
-- these functions, which run as their owner with a fixed search_path (so no object the caller
-- could create shadows ours) and do exactly one thing. EXECUTE on them is granted to the runtime
-- role alone by that grants step; here it is taken from PUBLIC, which every new function gets.

-- Revokes API key `key_id`, keeping the first revocation time. NULL when no such key; else true
-- when this call revoked it, false when it was revoked already. Un-revoking is impossible: the
-- runtime role has no UPDATE on api_keys at all.
CREATE FUNCTION countersign_revoke_api_key(key_id uuid) RETURNS boolean
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public AS $$
    UPDATE public.api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE id = key_id
    RETURNING revoked_at = now();
$$;
REVOKE EXECUTE ON FUNCTION countersign_revoke_api_key(uuid) FROM PUBLIC;

-- Releases an idempotency claim left in flight by a request that failed, so a retry runs afresh.
-- Only an in-flight claim: a completed record (the stored answer to replay) cannot be deleted.
CREATE FUNCTION countersign_release_idempotency(key_owner uuid, key text) RETURNS void
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public AS $$
    DELETE FROM public.idempotency_records
    WHERE api_key_id = key_owner AND idempotency_key = key AND state = 'in_flight';
$$;
REVOKE EXECUTE ON FUNCTION countersign_release_idempotency(uuid, text) FROM PUBLIC;

-- Creates the missing monthly partitions of one of Countersign's own partitioned tables (see
-- countersign_ensure_monthly_partitions, 0008): serving replicas call it every day, as the runtime
-- role, which may not create tables itself. Only `proofs` and `audit_events`, only from this month
-- on; the general function (any table, any months) stays the owner's.
CREATE FUNCTION countersign_maintain_partitions(parent_table text, months_ahead integer)
RETURNS TABLE (partition_name text, range_start timestamptz, range_end timestamptz, error text)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public AS $$
BEGIN
    IF parent_table IS NULL OR parent_table NOT IN ('proofs', 'audit_events') THEN
        RAISE EXCEPTION 'partitions are maintained for proofs and audit_events only, not %', parent_table
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    RETURN QUERY SELECT p.partition_name, p.range_start, p.range_end, p.error
        FROM public.countersign_ensure_monthly_partitions(format('public.%I', parent_table)::regclass, months_ahead) p;
END;
$$;
REVOKE EXECUTE ON FUNCTION countersign_maintain_partitions(text, integer) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION countersign_ensure_monthly_partitions(regclass, integer, timestamptz, timestamptz) FROM PUBLIC;
