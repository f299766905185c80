-- 0018: the text search's indexes (recipient and address trigrams, the folded reference) move off
-- `deliveries`, onto a table that is written once per delivery and never updated.
--
-- Why: `deliveries_status_seq` indexes the status, so the upload's `UPDATE deliveries SET status
-- = 'delivered'` can never be a HOT update: PostgreSQL inserts a new entry into every index of
-- `deliveries` for it, and 0016's trigram GIN index over recipient and address is by far the
-- dearest of them (it re-extracts every trigram of both texts; 5,000 such updates took 180-500 ms
-- without it and 430-970 ms with it). Measured with Benchmarks/upload_compare.sh, the index cost
-- every upload about 5 % of its PostgreSQL CPU (docs/decisions/0027-upload-cost.md); the B-tree
-- over the folded reference is cheaper but needless in the same way. The reference never changes
-- (deliveries_guard) and nothing the service does changes recipient or address, so their indexes
-- belong where no status update rewrites them.
--
-- `delivery_search_text` holds each delivery's reference, recipient and address, filled by a trigger on
-- deliveries (every insert, whoever writes it: the service, migrations, the benchmarks' bulk
-- INSERTs), and kept equal if the owner ever changes the texts (an UPDATE that names either
-- column; the runtime role may not). The trigger function is SECURITY DEFINER, so the runtime role
-- only reads the table (the search); it cannot write a search text of its own. No foreign key: the
-- rows are written only by the trigger of the delivery they belong to, and deliveries are never
-- deleted (deliveries_guard); a foreign key would cost every delivery insert an index look-up.
-- The search (DeliverySearchConditions.matching) reads the index through this table.
CREATE TABLE delivery_search_text (
    delivery_id    uuid PRIMARY KEY,
    reference      text NOT NULL,
    recipient_name text NOT NULL,
    address        text NOT NULL
);

CREATE FUNCTION countersign_copy_delivery_search_text() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
BEGIN
    INSERT INTO public.delivery_search_text (delivery_id, reference, recipient_name, address)
    VALUES (NEW.id, NEW.reference, NEW.recipient_name, NEW.address)
    ON CONFLICT (delivery_id) DO UPDATE SET recipient_name = EXCLUDED.recipient_name, address = EXCLUDED.address;
    RETURN NULL;
END;
$$;
REVOKE EXECUTE ON FUNCTION countersign_copy_delivery_search_text() FROM PUBLIC;

CREATE TRIGGER deliveries_search_text AFTER INSERT OR UPDATE OF recipient_name, address ON deliveries
    FOR EACH ROW EXECUTE FUNCTION countersign_copy_delivery_search_text();

INSERT INTO delivery_search_text (delivery_id, reference, recipient_name, address)
SELECT id, reference, recipient_name, address FROM deliveries;

CREATE INDEX delivery_search_text_trgm ON delivery_search_text
    USING gin (recipient_name extensions.gin_trgm_ops, address extensions.gin_trgm_ops);
CREATE INDEX delivery_search_text_reference_folded ON delivery_search_text ((lower(reference) COLLATE "C"));
DROP INDEX deliveries_text_trgm;
DROP INDEX deliveries_reference_folded;
