-- 0020: new deliveries get time-ordered ids (UUID version 7), not random ones (version 4).
--
-- Why: a delivery's id is a key of `deliveries_pkey` and of `proofs_delivery_id`, and the upload
-- that records its proof adds an entry to both (the delivery's row is updated, not in place: its
-- status is indexed). With random ids each of those entries falls on a random page of an index
-- as large as the table's history: at a million deliveries the pages outgrow the buffer cache,
-- are written back at random, and each one touched first after a checkpoint is copied whole into
-- the WAL, which slowed commits (docs/decisions/0037-time-ordered-ids.md). A version 7 id starts
-- with the time it was made, so deliveries made about the same day share a few pages.
-- - The service makes proof and attempt ids the same way (`UUID.timeOrdered`); this default serves
--   every insert that names no id: the service's own, and an operator's.
-- - Ids already stored keep their value: a delivery's id is part of its audit events.
-- - The bits: PostgreSQL 15 has no uuidv7(), so this takes a version 4 UUID and writes the Unix
--   time in milliseconds over its first 6 bytes (RFC 9562, 5.7), then turns the version nibble
--   from 0100 into 0111 (set_bit counts bits from each byte's least significant one: 52 and 53
--   are byte 6's 0x10 and 0x20). The variant bits stay 10; 74 random bits remain.
CREATE FUNCTION countersign_uuid_v7() RETURNS uuid
LANGUAGE sql VOLATILE PARALLEL SAFE SET search_path = pg_catalog AS $$
    SELECT encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid())
                                          PLACING substring(int8send(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3)
                                          FROM 1 FOR 6), 52, 1), 53, 1), 'hex')::uuid;
$$;
REVOKE EXECUTE ON FUNCTION countersign_uuid_v7() FROM PUBLIC;

ALTER TABLE deliveries ALTER COLUMN id SET DEFAULT countersign_uuid_v7();
