-- 0008: `proofs` partitioned by month of `received_at` (docs/scaling.md §4).
--
-- One partition per calendar month (UTC), `proofs_pYYYYMM`, plus `proofs_default`, a safety net
-- that stays empty while partitions are created ahead (by `countersign migrate`, at `serve`
-- start and every 24 h while serving; see countersign_ensure_monthly_partitions below). A month
-- of proofs can then be archived and dropped as one table (the retention procedure in
-- docs/scaling.md) instead of deleted row by row, which the immutability trigger refuses anyway.
--
-- What changes:
-- - The primary key is (id, received_at): a unique key on a partitioned table must include the
--   partition key. Proof ids are random UUIDs, so id stays unique in practice.
-- - "One proof per delivery" can no longer be a unique index on delivery_id. The delivery row
--   is the arbiter: the upload marks it delivered with `UPDATE ... WHERE status = 'pending'` in
--   the same statement that inserts the proof, and a statement that updated no delivery rolls
--   its proof back (ProofRepository.record). `deliveries.delivered_at` is the proof's
--   `received_at`, so lookups by reference join on both and touch one partition.
-- - `proofs_delivery_id` is now a plain (per-partition) index.
--
-- Everything else is kept: every column, NOT NULL, CHECK and foreign key (under their 0002
-- names), lz4 for body and ink, STORAGE EXTERNAL for png (partitions inherit both), the
-- immutability row trigger (inherited by partitions), the no-TRUNCATE statement trigger (copied
-- onto every partition: statement-level TRUNCATE triggers are not inherited) and 0006's
-- (received_at, id) index.
--
-- The existing rows are copied into the new table inside this migration's transaction, which
-- holds an ACCESS EXCLUSIVE lock on proofs throughout: uploads and proof reads wait for it
-- (measured in docs/scaling.md §4).

-- Creates the monthly range partitions `<parent>_pYYYYMM` of `parent` (any table partitioned by
-- RANGE on one timestamptz column) that are missing, for every month (UTC) from the month of
-- `since` (default: now) to `months_ahead` months after the current one, extended to the month
-- of `through` when that is later. Each new partition gets the parent's statement-level TRUNCATE
-- triggers (row triggers, indexes, constraints, storage and compression settings are inherited
-- by PostgreSQL itself). Returns one row per partition it tried to create: `error` is NULL when
-- it was created, else why not (for instance rows of that month already in the default
-- partition, or the 2 s lock wait ran out behind a long transaction); the other months are
-- still created, and the next call tries again. Existing partitions are left alone and not
-- reported, so a call with nothing to do takes no lock on `parent` at all.
--
-- Concurrent callers (several replicas starting together) are serialised by a transaction-level
-- advisory lock, so each partition is created exactly once.
CREATE FUNCTION countersign_ensure_monthly_partitions(parent regclass, months_ahead integer DEFAULT 3,
                                                      since timestamptz DEFAULT NULL, through timestamptz DEFAULT NULL)
RETURNS TABLE (partition_name text, range_start timestamptz, range_end timestamptz, error text)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    parent_schema   name;
    parent_name     name;
    key_type        oid;
    current_month   timestamp := date_trunc('month', now() AT TIME ZONE 'UTC');
    month           timestamp;
    last_month      timestamp;
    child           text;
    previous_wait   text := current_setting('lock_timeout');
    trigger_oid     oid;
BEGIN
    IF months_ahead IS NULL OR months_ahead < 0 OR months_ahead > 120 THEN
        RAISE EXCEPTION 'months_ahead must be between 0 and 120, not %', months_ahead USING ERRCODE = 'invalid_parameter_value';
    END IF;
    SELECT n.nspname, c.relname, a.atttypid INTO parent_schema, parent_name, key_type
    FROM pg_partitioned_table pt
    JOIN pg_class c ON c.oid = pt.partrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_attribute a ON a.attrelid = pt.partrelid AND a.attnum = pt.partattrs[0]
    WHERE pt.partrelid = parent AND pt.partstrat = 'r' AND pt.partnatts = 1;
    IF NOT FOUND OR key_type <> 'timestamptz'::regtype THEN
        RAISE EXCEPTION '% is not partitioned by RANGE on one timestamptz column', parent USING ERRCODE = 'wrong_object_type';
    END IF;

    -- "CSPARTNS" as ASCII. Polled rather than waited for, so a lock_timeout cannot cut the wait.
    WHILE NOT pg_try_advisory_xact_lock(4851309465092509267) LOOP
        PERFORM pg_sleep(0.05);
    END LOOP;

    month := date_trunc('month', least(coalesce(since, now()), now()) AT TIME ZONE 'UTC');
    last_month := greatest(current_month + make_interval(months => months_ahead),
                           date_trunc('month', coalesce(through, now()) AT TIME ZONE 'UTC'));
    WHILE month <= last_month LOOP
        child := parent_name || '_p' || to_char(month, 'YYYYMM');
        IF to_regclass(format('%I.%I', parent_schema, child)) IS NULL THEN
            partition_name := child;
            range_start := month AT TIME ZONE 'UTC';
            range_end := (month + interval '1 month') AT TIME ZONE 'UTC';
            error := NULL;
            BEGIN
                -- CREATE ... PARTITION OF locks the parent ACCESS EXCLUSIVE for a moment: never queue
                -- behind a long export for more than 2 s (every query on the parent would queue behind us).
                PERFORM set_config('lock_timeout', '2s', true);
                EXECUTE format('CREATE TABLE %I.%I PARTITION OF %I.%I FOR VALUES FROM (%L) TO (%L)',
                               parent_schema, child, parent_schema, parent_name,
                               to_char(month, 'YYYY-MM-DD') || ' 00:00:00+00',
                               to_char(month + interval '1 month', 'YYYY-MM-DD') || ' 00:00:00+00');
                FOR trigger_oid IN
                    SELECT t.oid FROM pg_trigger t
                    WHERE t.tgrelid = parent AND NOT t.tgisinternal
                      AND t.tgtype & 32 <> 0   -- TRUNCATE
                      AND t.tgtype & 1 = 0     -- FOR EACH STATEMENT
                    ORDER BY t.tgname
                LOOP
                    EXECUTE replace(pg_get_triggerdef(trigger_oid), format(' ON %I.%I ', parent_schema, parent_name),
                                    format(' ON %I.%I ', parent_schema, child));
                END LOOP;
                PERFORM set_config('lock_timeout', previous_wait, true);
            EXCEPTION WHEN OTHERS THEN
                -- The block's subtransaction is rolled back: no half-made partition, lock_timeout restored.
                error := SQLERRM;
            END;
            RETURN NEXT;
        END IF;
        month := month + interval '1 month';
    END LOOP;
END;
$$;

ALTER TABLE proofs RENAME TO proofs_before_0008;
ALTER INDEX proofs_pkey RENAME TO proofs_before_0008_pkey;
ALTER INDEX proofs_delivery_id RENAME TO proofs_before_0008_delivery_id;
ALTER INDEX proofs_received_at RENAME TO proofs_before_0008_received_at;

CREATE TABLE proofs (
    id                        uuid NOT NULL,
    delivery_id               uuid NOT NULL CONSTRAINT proofs_delivery_id_fkey REFERENCES deliveries (id),
    signer_name               text NOT NULL,
    captured_at               timestamptz NOT NULL,
    captured_at_offset_min    integer NOT NULL CONSTRAINT proofs_captured_at_offset_min_check CHECK (captured_at_offset_min BETWEEN -1080 AND 1080),
    captured_at_text          text NOT NULL,
    received_at               timestamptz NOT NULL,
    location_lat              double precision CONSTRAINT proofs_location_lat_check CHECK (location_lat BETWEEN -90 AND 90),
    location_lon              double precision CONSTRAINT proofs_location_lon_check CHECK (location_lon >= -180 AND location_lon < 180),
    location_accuracy_m       double precision CONSTRAINT proofs_location_accuracy_m_check CHECK (location_accuracy_m >= 0),
    distance_to_destination_m double precision CONSTRAINT proofs_distance_to_destination_m_check CHECK (distance_to_destination_m >= 0),
    geofence_radius_m         double precision NOT NULL,
    flags                     text[] NOT NULL DEFAULT '{}',
    device_id                 text,
    device_model              text,
    device_os                 text,
    device_app                text,
    body                      bytea NOT NULL,
    body_content_type         text NOT NULL,
    body_content_encoding     text,
    body_sha256               bytea NOT NULL CONSTRAINT proofs_body_sha256_check CHECK (length(body_sha256) = 32),
    ink_format                text NOT NULL,
    ink                       bytea NOT NULL,
    point_count               integer NOT NULL,
    stroke_count              integer NOT NULL,
    png                       bytea NOT NULL,
    png_sha256                bytea NOT NULL CONSTRAINT proofs_png_sha256_check CHECK (length(png_sha256) = 32),
    png_width                 integer NOT NULL,
    png_height                integer NOT NULL,
    render_options            jsonb NOT NULL,
    algorithm_version         text NOT NULL,
    uploaded_by               uuid NOT NULL CONSTRAINT proofs_uploaded_by_fkey REFERENCES api_keys (id),
    idempotency_key           text,
    CONSTRAINT proofs_check CHECK ((location_lat IS NULL) = (location_lon IS NULL)),
    CONSTRAINT proofs_pkey PRIMARY KEY (id, received_at)
) PARTITION BY RANGE (received_at);
ALTER TABLE proofs ALTER COLUMN body SET COMPRESSION lz4;
ALTER TABLE proofs ALTER COLUMN ink SET COMPRESSION lz4;
ALTER TABLE proofs ALTER COLUMN png SET STORAGE EXTERNAL;
-- Lookups by reference: deliveries → (delivery_id, received_at = delivered_at), one partition.
CREATE INDEX proofs_delivery_id ON proofs (delivery_id);
-- 0006: exports count and page a period by (received_at, id).
CREATE INDEX proofs_received_at ON proofs (received_at, id);

CREATE TRIGGER proofs_immutable BEFORE UPDATE OR DELETE ON proofs
    FOR EACH ROW EXECUTE FUNCTION countersign_refuse_change();
CREATE TRIGGER proofs_no_truncate BEFORE TRUNCATE ON proofs
    FOR EACH STATEMENT EXECUTE FUNCTION countersign_refuse_change();

-- Partitions for every month that holds proofs, the current one and three ahead. A month that
-- cannot be created stops the migration (nothing of it is applied).
DO $$
DECLARE
    failure record;
BEGIN
    SELECT m.partition_name, m.error INTO failure
    FROM countersign_ensure_monthly_partitions('proofs', 3,
             (SELECT min(received_at) FROM proofs_before_0008), (SELECT max(received_at) FROM proofs_before_0008)) m
    WHERE m.error IS NOT NULL LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'cannot create partition %: %', failure.partition_name, failure.error;
    END IF;
END;
$$;
CREATE TABLE proofs_default PARTITION OF proofs DEFAULT;
CREATE TRIGGER proofs_no_truncate BEFORE TRUNCATE ON proofs_default
    FOR EACH STATEMENT EXECUTE FUNCTION countersign_refuse_change();

-- The statement that stores a proof has always marked its delivery delivered with delivered_at =
-- the proof's received_at. Make sure of it for every stored proof (rows written by hand may not
-- be), since look-ups now find the partition by delivered_at and uploads are arbitrated by status.
UPDATE deliveries d SET status = 'delivered', delivered_at = p.received_at
FROM proofs_before_0008 p
WHERE p.delivery_id = d.id AND (d.status, d.delivered_at) IS DISTINCT FROM ('delivered', p.received_at);

INSERT INTO proofs (id, delivery_id, signer_name, captured_at, captured_at_offset_min, captured_at_text, received_at,
    location_lat, location_lon, location_accuracy_m, distance_to_destination_m, geofence_radius_m, flags, device_id,
    device_model, device_os, device_app, body, body_content_type, body_content_encoding, body_sha256, ink_format, ink,
    point_count, stroke_count, png, png_sha256, png_width, png_height, render_options, algorithm_version, uploaded_by,
    idempotency_key)
SELECT id, delivery_id, signer_name, captured_at, captured_at_offset_min, captured_at_text, received_at,
    location_lat, location_lon, location_accuracy_m, distance_to_destination_m, geofence_radius_m, flags, device_id,
    device_model, device_os, device_app, body, body_content_type, body_content_encoding, body_sha256, ink_format, ink,
    point_count, stroke_count, png, png_sha256, png_width, png_height, render_options, algorithm_version, uploaded_by,
    idempotency_key
FROM proofs_before_0008;

-- DROP TABLE fires no trigger: the old table goes once its rows are in the new one.
DROP TABLE proofs_before_0008;
