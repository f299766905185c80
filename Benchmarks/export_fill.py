#!/usr/bin/env python3
"""Fills a Countersign database with N more proofs fast, each with a valid `proof_recorded` event.

    export_fill.py DATABASE_URL N TEMPLATE_REFERENCE PREFIX

Copies the one proof of delivery TEMPLATE_REFERENCE (uploaded through the API) N times in SQL
(new deliveries PREFIX1..PREFIXN, new proof ids, received_at 1 ms apart), then appends each copy's
event to its chain (hashes computed here, as docs/audit.md describes, with
scripts/reference-verifier's encodings) and moves the chain heads: so `verify --database`, the
exporter's own check and bundle verification all hold, as for proofs uploaded one by one.
"""
import hashlib
import json
import os
import struct
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "scripts", "reference-verifier"))
from countersign_verify import event_hash, facts_digest, rows  # noqa: E402


def psql(url, sql, stdin=None):
    return subprocess.run(["psql", "-XAtq", "-v", "ON_ERROR_STOP=1", url, "-c", sql], input=stdin, check=True,
                          capture_output=True, text=True).stdout


def main(url, count, template, prefix):
    count = int(count)
    columns = [c for c in psql(url, """SELECT column_name FROM information_schema.columns
        WHERE table_name = 'proofs' AND table_schema = 'public' AND is_generated = 'NEVER' ORDER BY ordinal_position""").split()
        if c not in ("id", "delivery_id", "received_at")]
    start = int(psql(url, f"SELECT count(*) FROM deliveries WHERE reference LIKE '{prefix}%'"))
    psql(url, f"""
        INSERT INTO deliveries (reference, recipient_name, address, destination_lat, destination_lon, status, delivered_at, created_by)
        SELECT '{prefix}' || g, t.recipient_name, t.address, t.destination_lat, t.destination_lon, 'delivered',
            t.delivered_at + g * interval '1 millisecond', t.created_by
        FROM deliveries t, generate_series({start + 1}, {start + count}) g WHERE t.reference = '{template}';
        INSERT INTO proofs (id, delivery_id, received_at, {", ".join(columns)})
        SELECT gen_random_uuid(), d.id, p.received_at + g * interval '1 millisecond', {", ".join("p." + c for c in columns)}
        FROM proofs p JOIN deliveries t ON t.id = p.delivery_id AND t.reference = '{template}',
            generate_series({start + 1}, {start + count}) g JOIN deliveries d ON d.reference = '{prefix}' || g;
        """)
    facts = rows(url, f"""
        SELECT p.id::text AS proof_id, d.reference::text AS reference, p.signer_name AS signer_name,
            (extract(epoch FROM p.captured_at) * 1000000)::int8 AS captured_at_us, p.captured_at_offset_min, p.captured_at_text,
            (extract(epoch FROM p.received_at) * 1000000)::int8 AS received_at_us, p.location_lat::float8 AS location_lat,
            p.location_lon::float8 AS location_lon, p.location_accuracy_m::float8 AS location_accuracy_m,
            p.distance_to_destination_m::float8 AS distance_to_destination_m, p.geofence_radius_m::float8 AS geofence_radius_m,
            p.flags::text[] AS flags, p.device_id, p.device_model, p.device_os, p.device_app, p.body_content_type,
            p.body_content_encoding, p.ink_format, p.point_count, p.stroke_count, p.png_width, p.png_height,
            p.render_options, p.algorithm_version, p.uploaded_by::text AS uploaded_by
        FROM proofs p JOIN deliveries d ON d.id = p.delivery_id
        WHERE d.reference LIKE '{prefix}%' AND NOT EXISTS (SELECT 1 FROM audit_events e WHERE e.subject = 'delivery:' || d.reference)""")
    model = rows(url, f"""SELECT details_text, actor_key_id::text AS actor_key_id, actor_role FROM audit_events
        WHERE action = 'proof_recorded' AND subject = 'delivery:{template}'""")[0]
    details = json.loads(model["details_text"])
    heads = {r["chain"]: (r["head_seq"], r["head_hash"]) for r in rows(url, "SELECT chain, head_seq, encode(head_hash, 'hex') AS head_hash FROM audit_chains")}
    base = int(psql(url, f"SELECT setval('audit_events_seq', nextval('audit_events_seq') + {len(facts)})")) - len(facts)
    lines = []
    for index, f in enumerate(sorted(facts, key=lambda f: (f["received_at_us"], f["proof_id"]))):
        subject = "delivery:" + f["reference"]
        chain = int.from_bytes(hashlib.sha256(subject.encode()).digest()[:2], "big") % 16
        bound = {"ink_sha256": details["ink_sha256"], "metadata_sha256": facts_digest(f), "png_sha256": details["png_sha256"],
                 "points_sha256": details["points_sha256"], "proof_id": f["proof_id"]}
        event = {"seq": base + index + 1, "chain": chain, "encoding": "countersign.audit/v2", "occurred_at_us": f["received_at_us"],
                 "actor_key_id": model["actor_key_id"], "actor_role": model["actor_role"], "action": "proof_recorded",
                 "subject": subject, "request_id": None, "client_address": None, "user_agent": None,
                 "details_text": json.dumps(bound, sort_keys=True, separators=(",", ":")), "prev_hash": heads[chain][1]}
        event["hash"] = event_hash(event)
        heads[chain] = (event["seq"], event["hash"])
        micros = event["occurred_at_us"]
        occurred = psql_time(micros)
        lines.append("\t".join([str(event["seq"]), occurred, event["actor_key_id"] or "\\N", event["actor_role"] or "\\N",
                                "proof_recorded", subject, "\\N", "\\N", "\\N", event["details_text"],
                                "\\\\x" + event["prev_hash"], "\\\\x" + event["hash"], str(chain), "2"]))
    copy = ("COPY audit_events (seq, occurred_at, actor_key_id, actor_role, action, subject, request_id, client_address, user_agent, "
            "details_text, prev_hash, hash, chain, encoding) FROM STDIN")
    subprocess.run(["psql", "-XAtq", "-v", "ON_ERROR_STOP=1", url, "-c", copy], input="\n".join(lines) + "\n", check=True, text=True)
    updates = "".join(f"UPDATE audit_chains SET head_seq = {seq}, head_hash = '\\x{hash}'::bytea WHERE chain = {chain};"
                      for chain, (seq, hash) in heads.items())
    psql(url, updates)
    print(f"filled {len(facts)} proofs")


def psql_time(micros):
    seconds, fraction = divmod(micros, 1_000_000)
    import datetime
    moment = datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc)
    return moment.strftime("%Y-%m-%d %H:%M:%S") + f".{fraction:06d}+00"


if __name__ == "__main__":
    main(*sys.argv[1:5])
