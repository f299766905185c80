-- Benchmarks/scale.sh: grows the database by deliveries :from+1 .. :to (of :target), each with a
-- proof whose content (ink, body, PNG, digests) is copied from the real uploads the script made
-- first (references SEED-*). Run with psql -v from=… -v to=… -v target=… -v anchor='…'; then
-- Benchmarks/proof_events.py appends each new proof's chain-valid `proof_recorded` event.
--
-- Places: 85 % around 20 cities (four in Germany, two by the 180th meridian), 15 % anywhere
-- between 60° S and 70° N; one in twenty without a destination. Times: evenly over the 20 days
-- before :anchor, in seq order. One proof in fifty carries the no_location flag. The grown
-- deliveries have no delivery_created event (as export_fill.py's copies): the proofs' events are
-- what the verifier and the exporter check.
SELECT setseed(:from::float8 / (:target + 1));
SELECT coalesce(max(seq), 0) AS before FROM deliveries \gset
CREATE TEMP TABLE cities (i int, lat float8, lon float8);
INSERT INTO cities VALUES
   (1, 52.52, 13.40), (2, 48.14, 11.58), (3, 53.55, 9.99), (4, 50.94, 6.96), (5, 48.86, 2.35),
   (6, 51.51, -0.13), (7, 40.42, -3.70), (8, 41.90, 12.50), (9, 52.37, 4.90), (10, 40.71, -74.01),
   (11, 34.05, -118.24), (12, 41.88, -87.63), (13, 35.68, 139.69), (14, -33.87, 151.21), (15, -18.14, 178.44),
   (16, -16.5, -179.9), (17, 64.84, -147.72), (18, -23.55, -46.63), (19, 19.43, -99.13), (20, 28.61, 77.21);
INSERT INTO deliveries (reference, recipient_name, address, destination_lat, destination_lon, status, created_at, updated_at, delivered_at)
SELECT 'B-' || g,
       (ARRAY['Ana','Ben','Chloé','Dmitri','Eve','Femi','Günther','Hana','Ivan','Jo'])[1 + g % 10] || ' ' ||
       (ARRAY['Müller','Smith','Tanaka','García','Rossi','Dubois','Kowalski','Okafor','Nguyen','Silva','O''Brien'])[1 + (g / 10) % 11] || ' ' || (g % 997),
       (g % 300) || ' ' || (ARRAY['Hauptstraße','Main Street','Rue de la Paix','Calle Mayor','Via Roma','Sakura-dori'])[1 + g % 6] || ', ' || (g % 90000),
       CASE WHEN g % 20 <> 0 THEN lat END, CASE WHEN g % 20 <> 0 THEN lon END,
       'delivered', t, t + interval '1 hour', t + interval '1 hour'
FROM (
    -- Delivered (t + 1 hour) no later than :anchor, before anything the service records itself.
    SELECT g, :'anchor'::timestamptz - interval '1 hour' - (:target - g) * (interval '20 days' / :target) AS t,
           greatest(-90, least(90, CASE WHEN r < 0.85 THEN c.lat + 0.15 * (random() + random() + random() - 1.5) ELSE -60 + 130 * random() END)) AS lat,
           CASE WHEN r < 0.85 THEN ((c.lon + 0.2 * (random() + random() + random() - 1.5) + 540)::numeric % 360 - 180)::float8
                ELSE -180 + 359.999 * random() END AS lon
    FROM (SELECT g, random() AS r, 1 + floor(random() * 20)::int AS ci FROM generate_series(:from + 1, :to) g) s
    JOIN cities c ON c.i = s.ci
) x
ORDER BY g;  -- seq follows g: the join would otherwise hand rows over grouped by city

-- The seeds are sealed (0025) and open only under their own proof ids: the copies are written in
-- clear, as proofs stored before 0025 are, from bench_clear_templates (Benchmarks/clear_templates.py).
CREATE TEMP TABLE src AS
    SELECT row_number() OVER (ORDER BY p.id) - 1 AS n, p.id, p.signer_name, p.captured_at_offset_min, p.captured_at_text,
        p.location_lat, p.location_lon, p.location_accuracy_m, p.distance_to_destination_m, p.geofence_radius_m, p.flags,
        p.device_id, p.device_model, p.device_os, p.device_app, c.body, p.body_content_type, p.body_content_encoding,
        p.body_sha256, p.ink_format, c.ink, p.point_count, p.stroke_count, c.png, p.png_sha256, p.png_width, p.png_height,
        p.render_options, p.algorithm_version, p.uploaded_by
    FROM proofs p JOIN deliveries d ON d.id = p.delivery_id JOIN bench_clear_templates c ON c.proof_id = p.id
    WHERE d.reference LIKE 'SEED-%';
INSERT INTO proofs (id, delivery_id, signer_name, captured_at, captured_at_offset_min, captured_at_text, received_at,
    location_lat, location_lon, location_accuracy_m, distance_to_destination_m, geofence_radius_m, flags, device_id, device_model,
    device_os, device_app, body, body_content_type, body_content_encoding, body_sha256, ink_format, ink, point_count, stroke_count,
    png, png_sha256, png_width, png_height, render_options, algorithm_version, uploaded_by, idempotency_key)
SELECT gen_random_uuid(), d.id, s.signer_name, d.delivered_at - interval '1 minute', s.captured_at_offset_min, s.captured_at_text, d.delivered_at,
    s.location_lat, s.location_lon, s.location_accuracy_m, s.distance_to_destination_m, s.geofence_radius_m,
    CASE WHEN d.seq % 50 = 0 THEN '{no_location}'::text[] ELSE s.flags END, s.device_id, s.device_model,
    s.device_os, s.device_app, s.body, s.body_content_type, s.body_content_encoding, s.body_sha256, s.ink_format, s.ink, s.point_count, s.stroke_count,
    s.png, s.png_sha256, s.png_width, s.png_height, s.render_options, s.algorithm_version, s.uploaded_by, NULL
FROM deliveries d JOIN src s ON s.n = d.seq % (SELECT count(*) FROM src)
WHERE d.reference LIKE 'B-%' AND d.seq > :before;

VACUUM ANALYZE deliveries;
VACUUM ANALYZE proofs;
