-- 0019: an area search reads its newest matches first, from one index over place and seq.
--
-- Why: 0016's GiST index over the destination point finds every delivery in an area, but in no
-- particular order. An area holding many deliveries none of which is among the newest rows (the
-- box across the 180th meridian at a million deliveries: 81,000 matches, none in read 1's window)
-- was read whole and sorted: 27-39 ms. This index holds each delivery as a point of three
-- dimensions, the cube (longitude, latitude, seq). `<@` a cube answers the area and the cursor
-- (seq below it) together, and ordering by the cube's `~> -6` (its third coordinate, negated:
-- cube's way of asking a GiST index for the highest values first) hands the matches over newest
-- first, so a page stops after its 51 rows, however many the area holds: under 1 ms
-- (docs/decisions/0032-search-by-place-and-seq.md).
-- - cube is in PostgreSQL's contrib, like pg_trgm, and trusted (the database owner may create it);
--   it lives in schema `extensions` too. The runtime role gets USAGE on that schema (RuntimeRole)
--   to name the cube functions and operators in its queries.
-- - The cube is built one dimension at a time because each of those `cube` functions is STRICT: a
--   delivery without a destination is NULL and matches no area, where `cube(float8[])` would
--   raise an error on a NULL element whenever a plan computed it for such a row.
-- - An expression index, not a stored column: a page visits only its own 51 rows.
-- - The point index goes: no read uses it any more, and every insert paid for it. The stored
--   `destination` point stays: read 1 tests its rows with it.
-- - Building the index takes about 40 s per million deliveries; writes to deliveries wait meanwhile.
CREATE EXTENSION IF NOT EXISTS cube WITH SCHEMA extensions;

CREATE INDEX deliveries_place_seq ON deliveries
    USING gist (extensions.cube(extensions.cube(extensions.cube(destination_lon::float8), destination_lat::float8), seq::float8))
    WHERE destination_lat IS NOT NULL;
DROP INDEX deliveries_destination_point;
