-- 0017: device keys (issue 21, docs/courier-guide.md §7, docs/decisions/0026-device-keys.md).
--
-- A courier's device makes an Ed25519 key pair, registers the public key with its courier API key
-- (`registered`), an admin or dispatcher approves it (`approved`) or revokes it (`revoked`, for
-- good). An upload signed by an approved key stores the key's id and the 64-byte signature with the
-- proof; the proof's `proof_recorded` event binds both, and the registration, approval and
-- revocation are audit events binding the public key, so a key swapped in this table afterwards is
-- found by `countersign verify --database`.
--
-- The runtime role may INSERT a registration (status `registered` only: the guard below) and read;
-- status changes go through the two SECURITY DEFINER functions, and the guard refuses every other
-- change, whoever sends it (no DELETE, no TRUNCATE, no change of identity or public key, no way back).

CREATE TABLE device_keys (
    id            uuid PRIMARY KEY,
    -- The courier API key that registered the device; only that key's uploads may use it.
    registered_by uuid NOT NULL REFERENCES api_keys (id),
    public_key    bytea NOT NULL CONSTRAINT device_keys_public_key_unique UNIQUE
                  CONSTRAINT device_keys_public_key_length CHECK (octet_length(public_key) = 32),
    label         text NOT NULL CHECK (length(label) BETWEEN 1 AND 200),
    status        text NOT NULL DEFAULT 'registered' CHECK (status IN ('registered', 'approved', 'revoked')),
    registered_at timestamptz NOT NULL DEFAULT now(),
    approved_by   uuid REFERENCES api_keys (id),
    approved_at   timestamptz,
    revoked_by    uuid REFERENCES api_keys (id),
    revoked_at    timestamptz,
    CONSTRAINT device_keys_approval CHECK ((approved_at IS NULL) = (approved_by IS NULL)),
    CONSTRAINT device_keys_revocation CHECK ((revoked_at IS NULL) = (revoked_by IS NULL)),
    CONSTRAINT device_keys_status_facts CHECK (CASE status
        WHEN 'registered' THEN approved_at IS NULL AND revoked_at IS NULL
        WHEN 'approved' THEN approved_at IS NOT NULL AND revoked_at IS NULL
        ELSE revoked_at IS NOT NULL END)
);
-- A courier's own devices (GET /v1/devices as a courier), newest first.
CREATE INDEX device_keys_registered_by ON device_keys (registered_by, registered_at DESC);

-- Registered → approved → revoked (or registered → revoked: a refused registration), never back;
-- a key's id, owner, public key, label and registration time never change; no DELETE.
CREATE FUNCTION countersign_guard_device_key() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION 'DELETE on device_keys is not allowed' USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF TG_OP = 'INSERT' THEN
        IF NEW.status <> 'registered' THEN
            RAISE EXCEPTION 'a device key is registered before it is approved' USING ERRCODE = 'check_violation',
                CONSTRAINT = 'device_key_transition';
        END IF;
        RETURN NEW;
    END IF;
    IF NEW.id <> OLD.id OR NEW.registered_by <> OLD.registered_by OR NEW.public_key <> OLD.public_key
       OR NEW.label <> OLD.label OR NEW.registered_at <> OLD.registered_at THEN
        RAISE EXCEPTION 'a device key''s id, owner, public key, label and registration never change'
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF OLD.status = 'revoked'
       OR (OLD.status = 'approved' AND NEW.status <> 'revoked')
       OR (OLD.status = 'registered' AND NEW.status NOT IN ('approved', 'revoked')) THEN
        RAISE EXCEPTION 'device key % cannot go from % to %', OLD.id, OLD.status, NEW.status
            USING ERRCODE = 'check_violation', CONSTRAINT = 'device_key_transition';
    END IF;
    RETURN NEW;
END;
$$;
CREATE TRIGGER device_keys_guard BEFORE INSERT OR UPDATE OR DELETE ON device_keys
    FOR EACH ROW EXECUTE FUNCTION countersign_guard_device_key();
CREATE TRIGGER device_keys_no_truncate BEFORE TRUNCATE ON device_keys
    FOR EACH STATEMENT EXECUTE FUNCTION countersign_refuse_change();

-- Approves a registered key. Returns the key's status after the call (NULL: no such key), so the
-- caller can tell "approved now" from "already approved" and from "revoked" without a race.
CREATE FUNCTION countersign_approve_device_key(p_id uuid, p_by uuid) RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public AS $$
DECLARE
    current text;
BEGIN
    SELECT k.status INTO current FROM public.device_keys k WHERE k.id = p_id FOR UPDATE;
    IF current IS NULL OR current <> 'registered' THEN
        RETURN current;
    END IF;
    UPDATE public.device_keys SET status = 'approved', approved_by = p_by, approved_at = now() WHERE id = p_id;
    RETURN 'approved_now';
END;
$$;
REVOKE EXECUTE ON FUNCTION countersign_approve_device_key(uuid, uuid) FROM PUBLIC;

-- Revokes a key (registered or approved), keeping the first revocation. Same answers as above
-- (`revoked_now`, or the status it already had).
CREATE FUNCTION countersign_revoke_device_key(p_id uuid, p_by uuid) RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public AS $$
DECLARE
    current text;
BEGIN
    SELECT k.status INTO current FROM public.device_keys k WHERE k.id = p_id FOR UPDATE;
    IF current IS NULL OR current = 'revoked' THEN
        RETURN current;
    END IF;
    UPDATE public.device_keys SET status = 'revoked', revoked_by = p_by, revoked_at = now() WHERE id = p_id;
    RETURN 'revoked_now';
END;
$$;
REVOKE EXECUTE ON FUNCTION countersign_revoke_device_key(uuid, uuid) FROM PUBLIC;

-- The device key that signed an upload and its signature (nullable: unsigned uploads, and every
-- proof from before). Nullable columns without a default: no rewrite of any partition.
ALTER TABLE proofs
    ADD COLUMN device_key_id    uuid CONSTRAINT proofs_device_key_id_fkey REFERENCES device_keys (id),
    ADD COLUMN device_signature bytea;
ALTER TABLE proofs ADD CONSTRAINT proofs_device_signature_check
    CHECK ((device_key_id IS NULL) = (device_signature IS NULL) AND (device_signature IS NULL OR octet_length(device_signature) = 64));

-- A signed proof only with an approved key of the uploading courier, checked by the database too
-- (the service checks first and answers 4xx). The key row is locked FOR SHARE, so a revocation
-- running at the same time waits for the upload to commit and its audit event comes after the
-- proof's: verification can then order the two by seq. SECURITY DEFINER because FOR SHARE needs
-- UPDATE privilege on device_keys, which the runtime role does not have.
CREATE FUNCTION countersign_guard_signed_proof() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
DECLARE
    key_status text;
    key_owner uuid;
BEGIN
    IF NEW.device_key_id IS NULL THEN
        RETURN NEW;
    END IF;
    SELECT k.status, k.registered_by INTO key_status, key_owner FROM device_keys k WHERE k.id = NEW.device_key_id FOR SHARE;
    IF key_status IS DISTINCT FROM 'approved' OR key_owner IS DISTINCT FROM NEW.uploaded_by THEN
        RAISE EXCEPTION 'device key % is not an approved key of the uploading key', NEW.device_key_id
            USING ERRCODE = 'check_violation', CONSTRAINT = 'device_key_not_usable';
    END IF;
    RETURN NEW;
END;
$$;
CREATE TRIGGER proofs_device_key_usable BEFORE INSERT ON proofs
    FOR EACH ROW EXECUTE FUNCTION countersign_guard_signed_proof();
