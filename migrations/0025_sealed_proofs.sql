-- 0025: a proof's biometric bytes are stored sealed (issue 43, docs/decisions/0043-sealed-proofs.md).
--
-- Each delivery gets a data key when its proof is stored: 32 random bytes, kept here only wrapped
-- (AES-256-GCM) by a key-encryption key of the deployment's DATA_KEY_FILE, which the database never
-- holds. The proof's body (the point stream), canonical ink and PNG are sealed with it
-- (AES-256-GCM, bound to the proof id and the column). Destroying the row destroys the only copy
-- of the key, and with it every box it sealed: erasure without rewriting the audit chain.
--
-- proofs.sealing says how the three columns are stored: 0 in clear (proofs stored before this
-- migration), 1 sealed as above. Its rule is a domain's, as in 0011 (a table CHECK is parsed
-- again for every upload's INSERT), made the way 0011 made its domains: before PostgreSQL 18 a
-- new column of a domain *with* constraints rewrites every partition (every stored body and PNG)
-- under an exclusive lock. So the column is added as a plain smallint with a constant default (the
-- catalog alone), changed to the domain while it has no constraint (binary-coercible: no
-- rewrite), and the constraint is added to the domain last (a scan, no rewrite).

CREATE TABLE delivery_data_keys (
    delivery_id  uuid PRIMARY KEY REFERENCES deliveries (id),
    kek_id       text NOT NULL CONSTRAINT delivery_data_keys_kek_id CHECK (kek_id ~ '^[A-Za-z0-9._-]{1,32}$'),
    -- nonce (12) ‖ wrapped key (32) ‖ tag (16)
    wrapped_key  bytea NOT NULL CONSTRAINT delivery_data_keys_wrapped_length CHECK (octet_length(wrapped_key) = 60),
    created_at   timestamptz NOT NULL DEFAULT now()
);

CREATE DOMAIN proof_sealing AS smallint;
ALTER TABLE proofs ADD COLUMN sealing smallint NOT NULL DEFAULT 0;
ALTER TABLE proofs ALTER COLUMN sealing TYPE proof_sealing;
ALTER DOMAIN proof_sealing ADD CONSTRAINT proof_sealing_known CHECK (VALUE IN (0, 1));

-- A wrapped key never changes; destroying one is erasure, which gets a function of its own.
CREATE TRIGGER delivery_data_keys_immutable BEFORE UPDATE OR DELETE ON delivery_data_keys
    FOR EACH ROW EXECUTE FUNCTION countersign_refuse_change();
CREATE TRIGGER delivery_data_keys_no_truncate BEFORE TRUNCATE ON delivery_data_keys
    FOR EACH STATEMENT EXECUTE FUNCTION countersign_refuse_change();

-- Sealed bytes do not compress: TOAST's compression attempt on every new body, ink and PNG was
-- PostgreSQL CPU spent for nothing (the PNG never compressed either). EXTERNAL stores them out of
-- line, uncompressed; rows already stored keep what they have. A catalog change, no rewrite.
ALTER TABLE proofs ALTER COLUMN body SET STORAGE EXTERNAL, ALTER COLUMN ink SET STORAGE EXTERNAL,
    ALTER COLUMN png SET STORAGE EXTERNAL;
