-- 0021: the text search reads its matches newest first, one band of 32,768 deliveries at a time.
--
-- Why: the trigram index (0016, moved here by 0018) hands over a word's matches in no useful
-- order, so the search took every match, joined each to its delivery and sorted them all by seq
-- to keep the newest page. A word common in old deliveries and absent from the newest ones (the
-- recent window of docs/decisions/0020-search-from-indexes.md cannot fill the page) cost a read
-- and a join per match: a first page of `q=main street` over a million deliveries took about a
-- second. docs/decisions/0039-text-search-by-band.md has the measurements.
--
-- Each row now carries its delivery's seq, and the indexes lead with the band, `seq >> 15`:
-- - `delivery_search_text_band_trgm`: GIN over the band (btree_gin, a trusted contrib extension
--   shipped with the server like pg_trgm and cube), the recipient's and the address's trigrams.
--   An equality on the band narrows every trigram's posting list to that band's rows, so one
--   band's matches cost what that band holds, not what the table holds.
-- - `delivery_search_text_band_reference`: the folded reference's prefix range within a band.
-- The search (DeliverySearchConditions.textBands) asks the newest band first and stops at a full
-- page; a rare word asks every band, each at the cost of its share of the posting lists.
--
-- The GIN index keeps its pending list of new entries small (64 kB, the least PostgreSQL allows;
-- 4 MB by default): every scan of a GIN index also reads all of its pending list, and the search
-- scans the index once per band, so a full default list would be read dozens of times by one
-- search. Without a pending list at all (`fastupdate = off`) every delivery insert would merge its
-- trigrams into the index itself, which costs inserts far more. Measurements:
-- docs/decisions/0039-text-search-by-band.md.
--
-- The table is rebuilt in seq order (not updated in place): a band's rows then share a few
-- heap pages, as every later insert does by itself. The rebuild holds writes to deliveries (the
-- trigger writes here, and uploads update deliveries) for its time; the old table and its
-- indexes are dropped.
-- Deliveries created while the table is copied would be written by the trigger into the old table,
-- which is then dropped: writes to deliveries wait for this migration instead.
LOCK TABLE deliveries IN SHARE ROW EXCLUSIVE MODE;

CREATE EXTENSION IF NOT EXISTS btree_gin WITH SCHEMA extensions;

CREATE TABLE delivery_search_text_by_band (
    delivery_id    uuid NOT NULL,
    seq            bigint NOT NULL,
    reference      text NOT NULL,
    recipient_name text NOT NULL,
    address        text NOT NULL
);
INSERT INTO delivery_search_text_by_band (delivery_id, seq, reference, recipient_name, address)
SELECT t.delivery_id, d.seq, t.reference, t.recipient_name, t.address
FROM delivery_search_text t JOIN deliveries d ON d.id = t.delivery_id
ORDER BY d.seq;
DROP TABLE delivery_search_text;
ALTER TABLE delivery_search_text_by_band RENAME TO delivery_search_text;
ALTER TABLE delivery_search_text ADD CONSTRAINT delivery_search_text_pkey PRIMARY KEY (delivery_id);

-- The band expression is written as DeliverySearchConditions.band writes it: the planner matches
-- an index expression only when the query's is the same.
CREATE INDEX delivery_search_text_band_trgm ON delivery_search_text
    USING gin ((seq >> 15), recipient_name extensions.gin_trgm_ops, address extensions.gin_trgm_ops)
    WITH (gin_pending_list_limit = 64);
CREATE INDEX delivery_search_text_band_reference ON delivery_search_text ((seq >> 15), (lower(reference) COLLATE "C"));

CREATE OR REPLACE FUNCTION countersign_copy_delivery_search_text() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
BEGIN
    INSERT INTO public.delivery_search_text (delivery_id, seq, reference, recipient_name, address)
    VALUES (NEW.id, NEW.seq, NEW.reference, NEW.recipient_name, NEW.address)
    ON CONFLICT (delivery_id) DO UPDATE SET recipient_name = EXCLUDED.recipient_name, address = EXCLUDED.address;
    RETURN NULL;
END;
$$;

ANALYZE delivery_search_text;
