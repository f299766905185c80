-- 0011: single-column CHECK constraints of the tables an upload writes become domains.
--
-- Why: PostgreSQL parses and plans every CHECK constraint of a table again for every INSERT or
-- UPDATE statement (ExecRelCheck reads each one from its stored text), which cost 4 % of the
-- machine's CPU under the upload benchmark: about 30 constraint expressions per stored proof over
-- proofs, deliveries, audit_events, audit_chains and idempotency_records. A domain's constraints
-- are parsed once per session (the type cache) and only evaluated per row. The rules are the same
-- rules, checked by the same SQLSTATE (23514, check_violation); constraints over two columns stay
-- table constraints.
--
-- How, without rewriting the tables: each domain is created without its constraint, the columns
-- change to it (binary-coercible: no rewrite, indexes kept), then the constraint is added to the
-- domain, which checks every existing value (a scan, not a rewrite), and the table constraints
-- go. Tables no upload writes (api_keys, audit_checkpoints) keep their table constraints.

CREATE DOMAIN sha256_digest AS bytea;
CREATE DOMAIN latitude_degrees AS double precision;
CREATE DOMAIN longitude_degrees AS double precision;
CREATE DOMAIN non_negative_metres AS double precision;
CREATE DOMAIN utc_offset_minutes AS integer;
CREATE DOMAIN delivery_reference AS text;
CREATE DOMAIN delivery_status AS text;
CREATE DOMAIN idempotency_key_text AS text;
CREATE DOMAIN idempotency_state AS text;
CREATE DOMAIN audit_seq AS bigint;
CREATE DOMAIN audit_head_seq AS bigint;
CREATE DOMAIN audit_chain_number AS smallint;
CREATE DOMAIN audit_encoding AS smallint;
CREATE DOMAIN audit_actor_role AS text;
CREATE DOMAIN audit_action AS text;

ALTER TABLE deliveries
    ALTER COLUMN reference TYPE delivery_reference,
    ALTER COLUMN destination_lat TYPE latitude_degrees,
    ALTER COLUMN destination_lon TYPE longitude_degrees,
    ALTER COLUMN status TYPE delivery_status;
ALTER TABLE proofs
    ALTER COLUMN captured_at_offset_min TYPE utc_offset_minutes,
    ALTER COLUMN location_lat TYPE latitude_degrees,
    ALTER COLUMN location_lon TYPE longitude_degrees,
    ALTER COLUMN location_accuracy_m TYPE non_negative_metres,
    ALTER COLUMN distance_to_destination_m TYPE non_negative_metres,
    ALTER COLUMN body_sha256 TYPE sha256_digest,
    ALTER COLUMN png_sha256 TYPE sha256_digest;
ALTER TABLE idempotency_records
    ALTER COLUMN idempotency_key TYPE idempotency_key_text,
    ALTER COLUMN request_sha256 TYPE sha256_digest,
    ALTER COLUMN state TYPE idempotency_state;
ALTER TABLE audit_events
    ALTER COLUMN seq TYPE audit_seq,
    ALTER COLUMN chain TYPE audit_chain_number,
    ALTER COLUMN encoding TYPE audit_encoding,
    ALTER COLUMN actor_role TYPE audit_actor_role,
    ALTER COLUMN action TYPE audit_action,
    ALTER COLUMN prev_hash TYPE sha256_digest,
    ALTER COLUMN hash TYPE sha256_digest;
ALTER TABLE audit_chains
    ALTER COLUMN chain TYPE audit_chain_number,
    ALTER COLUMN head_seq TYPE audit_head_seq,
    ALTER COLUMN head_hash TYPE sha256_digest;

ALTER DOMAIN sha256_digest ADD CONSTRAINT sha256_digest_length CHECK (length(VALUE) = 32);
ALTER DOMAIN latitude_degrees ADD CONSTRAINT latitude_degrees_range CHECK (VALUE BETWEEN -90 AND 90);
ALTER DOMAIN longitude_degrees ADD CONSTRAINT longitude_degrees_range CHECK (VALUE >= -180 AND VALUE < 180);
ALTER DOMAIN non_negative_metres ADD CONSTRAINT non_negative_metres_sign CHECK (VALUE >= 0);
ALTER DOMAIN utc_offset_minutes ADD CONSTRAINT utc_offset_minutes_range CHECK (VALUE BETWEEN -1080 AND 1080);
ALTER DOMAIN delivery_reference ADD CONSTRAINT delivery_reference_length CHECK (length(VALUE) BETWEEN 1 AND 64);
ALTER DOMAIN delivery_status ADD CONSTRAINT delivery_status_known CHECK (VALUE IN ('pending', 'delivered'));
ALTER DOMAIN idempotency_key_text ADD CONSTRAINT idempotency_key_text_length CHECK (length(VALUE) BETWEEN 1 AND 255);
ALTER DOMAIN idempotency_state ADD CONSTRAINT idempotency_state_known CHECK (VALUE IN ('in_flight', 'completed'));
ALTER DOMAIN audit_seq ADD CONSTRAINT audit_seq_positive CHECK (VALUE >= 1);
ALTER DOMAIN audit_head_seq ADD CONSTRAINT audit_head_seq_sign CHECK (VALUE >= 0);
ALTER DOMAIN audit_chain_number ADD CONSTRAINT audit_chain_number_sign CHECK (VALUE >= 0);
ALTER DOMAIN audit_encoding ADD CONSTRAINT audit_encoding_known CHECK (VALUE IN (1, 2));
ALTER DOMAIN audit_actor_role ADD CONSTRAINT audit_actor_role_known
    CHECK (VALUE IN ('courier', 'dispatcher', 'auditor', 'admin', 'cli', 'system'));
ALTER DOMAIN audit_action ADD CONSTRAINT audit_action_length CHECK (length(VALUE) BETWEEN 1 AND 64);

ALTER TABLE deliveries
    DROP CONSTRAINT deliveries_reference_check,
    DROP CONSTRAINT deliveries_destination_lat_check,
    DROP CONSTRAINT deliveries_destination_lon_check,
    DROP CONSTRAINT deliveries_status_check;
ALTER TABLE proofs
    DROP CONSTRAINT proofs_captured_at_offset_min_check,
    DROP CONSTRAINT proofs_location_lat_check,
    DROP CONSTRAINT proofs_location_lon_check,
    DROP CONSTRAINT proofs_location_accuracy_m_check,
    DROP CONSTRAINT proofs_distance_to_destination_m_check,
    DROP CONSTRAINT proofs_body_sha256_check,
    DROP CONSTRAINT proofs_png_sha256_check;
ALTER TABLE idempotency_records
    DROP CONSTRAINT idempotency_records_idempotency_key_check,
    DROP CONSTRAINT idempotency_records_request_sha256_check,
    DROP CONSTRAINT idempotency_records_state_check;
ALTER TABLE audit_events
    DROP CONSTRAINT audit_events_seq_check1,
    DROP CONSTRAINT audit_events_chain_check,
    DROP CONSTRAINT audit_events_encoding_check,
    DROP CONSTRAINT audit_events_actor_role_check1,
    DROP CONSTRAINT audit_events_action_check1,
    DROP CONSTRAINT audit_events_prev_hash_check1,
    DROP CONSTRAINT audit_events_hash_check1;
ALTER TABLE audit_chains
    DROP CONSTRAINT audit_chains_chain_check,
    DROP CONSTRAINT audit_chains_head_seq_check,
    DROP CONSTRAINT audit_chains_head_hash_check;
