-- 0022: a proof's signer's name and flags are searched newest first, one band of 32,768 deliveries
-- at a time, as 0021 does for the reference, recipient and address.
--
-- Why: the signer's trigram index and the flags index (0016) were on `proofs`, which has no
-- delivery seq. A flag or a signer's name common in old proofs but absent from the newest
-- deliveries made the search take every match from the index, join each to its delivery and
-- sort them all to keep the newest page: `flag=no_location` at a million deliveries took about
-- 180 ms at p95, growing with the table. docs/decisions/0040-proof-search-by-band.md has the
-- measurements.
--
-- `proof_search` holds, for each delivery with a proof, its seq, the proof's received_at, the
-- signer's name and the flags: what the search asks of a proof, beside the seq it pages by.
-- - `proof_search_band_signer`: GIN over the band (`delivery_seq >> 15`, written exactly as
--   DeliverySearchConditions writes it) and the signer's trigrams.
-- - `proof_search_band_flags`: GIN over the band and the flags, for proofs with a flag only (most
--   carry none: the index stays small and their uploads do not touch it).
-- Both keep a 64 kB pending list, as 0021's does: the search scans them once per band, and every
-- scan reads the whole pending list.
-- - The primary key is the delivery's seq: a delivery has one proof (the delivery row arbitrates,
--   0008), and a search that tests a flag row by row looks it up by seq.
--
-- A trigger on proofs writes each row when its proof is inserted (whoever inserts it: the
-- service, the benchmarks' bulk loads), but only for the proof its delivery names: the delivery is
-- delivered and its delivered_at is the proof's received_at. An upload's one statement inserts the
-- proof and marks its delivery delivered; the AFTER trigger fires at the end of that statement and
-- sees both. A proof row inserted any other way (for a pending delivery, say) is never searched
-- for, and cannot take the place of the proof that is later uploaded. The function is SECURITY
-- DEFINER, so the runtime role only reads the table: it cannot add, change or remove a search row.
-- Proofs never change, so nothing else writes it; the retention procedure (docs/scaling.md §4)
-- deletes a month's rows as the owner when it drops the month, and a restore copies them back.
--
-- The old indexes on proofs are dropped: each upload maintained them, and no query uses them now
-- (a server of the previous release, during a rolling upgrade, still answers its flag and signer
-- searches, by reading proofs whole). Dropping them locks proofs exclusively, reads included, at the
-- very end of this migration; it waits at most 5 s for a long reader (an export, a verification),
-- and past that the migration fails and leaves nothing behind: run it again once they are done.
--
-- Proofs inserted while the table is copied would be missed (the trigger does not exist yet when
-- the copy's snapshot is taken): uploads wait for this migration instead.
LOCK TABLE proofs IN SHARE ROW EXCLUSIVE MODE;

CREATE TABLE proof_search (
    delivery_seq bigint PRIMARY KEY,
    received_at  timestamptz NOT NULL,
    signer_name  text NOT NULL,
    flags        text[] NOT NULL
);

-- The proofs their deliveries name, in seq order, so that a band's rows share a few heap pages,
-- as later inserts do by themselves.
INSERT INTO proof_search (delivery_seq, received_at, signer_name, flags)
SELECT d.seq, p.received_at, p.signer_name, p.flags
FROM proofs p JOIN deliveries d ON d.id = p.delivery_id AND d.status = 'delivered' AND d.delivered_at = p.received_at
ORDER BY d.seq
ON CONFLICT (delivery_seq) DO NOTHING;

CREATE INDEX proof_search_band_signer ON proof_search
    USING gin ((delivery_seq >> 15), signer_name extensions.gin_trgm_ops)
    WITH (gin_pending_list_limit = 64);
CREATE INDEX proof_search_band_flags ON proof_search
    USING gin ((delivery_seq >> 15), flags)
    WITH (gin_pending_list_limit = 64)
    WHERE cardinality(flags) > 0;

CREATE FUNCTION countersign_copy_proof_search() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
BEGIN
    INSERT INTO public.proof_search (delivery_seq, received_at, signer_name, flags)
    SELECT d.seq, NEW.received_at, NEW.signer_name, NEW.flags FROM public.deliveries d
    WHERE d.id = NEW.delivery_id AND d.status = 'delivered' AND d.delivered_at = NEW.received_at
    ON CONFLICT (delivery_seq) DO NOTHING;
    RETURN NULL;
END;
$$;
REVOKE EXECUTE ON FUNCTION countersign_copy_proof_search() FROM PUBLIC;

-- A row trigger on the partitioned table: every partition, present and future, has it.
CREATE TRIGGER proofs_search AFTER INSERT ON proofs
    FOR EACH ROW EXECUTE FUNCTION countersign_copy_proof_search();

SET LOCAL lock_timeout = '5s';
DROP INDEX proofs_signer_name_trgm;
DROP INDEX proofs_flags;

ANALYZE proof_search;
