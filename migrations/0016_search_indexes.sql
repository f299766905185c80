-- 0016: searches (`GET /v1/deliveries`) answered from indexes, not by reading every match.
--
-- Why: the B-tree on (destination_lat, destination_lon) found a country's deliveries one by one
-- in latitude order, joined each to its proof, then kept the newest 50: 1,158 ms for a country
-- bbox at 200,000 deliveries. DeliveryRepository.search now first reads the newest rows below
-- the cursor (the seq index) and only when those hold too few matches asks the index of the
-- filter; docs/decisions/0020-search-from-indexes.md has the measurements.
--
-- - `destination` is the destination as a PostgreSQL `point` (x = longitude, y = latitude),
--   generated from the two columns, so the service writes nothing new. It is a stored column,
--   not an expression index, because an expression index cannot answer an index-only scan: with
--   `seq` included, a sparse box is answered from the GiST index alone (2 ms for 10,000 matches)
--   where visiting the table for each match cost 40-330 ms. Adding it rewrites the table once
--   (about 90 s per million deliveries, writes to deliveries blocked meanwhile).
-- - GiST over SP-GiST: built in 6 s instead of 12 s per million rows, and as fast to search
--   (2.4 vs 2.0 ms for 9,855 matches; the decision record). Both ship with PostgreSQL; PostGIS
--   is not needed.
-- - The old (lat, lon) B-tree goes: nothing reads it any more, and every insert paid for it.
-- - Text search (`q`) uses trigrams (pg_trgm, in PostgreSQL's contrib, a trusted extension the
--   database owner may create): one GIN index over recipient and address of deliveries, and one
--   over the signer's name of proofs (an index on the partitioned table, so every monthly
--   partition gets its own, also those created later). The reference is matched by its start,
--   which a B-tree over the lower-cased reference answers as a range (trigrams do poorly on the
--   prefix every reference shares: 93 ms for "REF-0099" at a million deliveries).
-- - Flags (`flag`) use a GIN index over `proofs.flags`, only for proofs that carry a flag (most
--   carry none, so the index stays small and inserts without flags do not touch it).
-- The extension's functions live in a schema of their own, not in public, whose every object has a
-- privilege decision for the runtime role (RuntimeRolePrivileges); index support functions need no
-- EXECUTE grant, so the runtime role's ILIKE uses the indexes without any.
CREATE SCHEMA IF NOT EXISTS extensions;
CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA extensions;

ALTER TABLE deliveries
    ADD COLUMN destination point GENERATED ALWAYS AS (point(destination_lon, destination_lat)) STORED;
CREATE INDEX deliveries_destination_point ON deliveries USING gist (destination) INCLUDE (seq)
    WHERE destination IS NOT NULL;
DROP INDEX deliveries_destination;

CREATE INDEX deliveries_text_trgm ON deliveries USING gin (recipient_name extensions.gin_trgm_ops, address extensions.gin_trgm_ops);
CREATE INDEX deliveries_reference_folded ON deliveries ((lower(reference) COLLATE "C"));
CREATE INDEX proofs_signer_name_trgm ON proofs USING gin (signer_name extensions.gin_trgm_ops);
CREATE INDEX proofs_flags ON proofs USING gin (flags) WHERE cardinality(flags) > 0;
