#!/usr/bin/env python3
"""Fills a Countersign database with N more proofs fast, each with a valid `proof_recorded` event.

    export_fill.py DATABASE_URL N TEMPLATE_REFERENCE PREFIX

Copies the one proof of delivery TEMPLATE_REFERENCE (uploaded through the API) N times in SQL
(new deliveries PREFIX1..PREFIXN, new proof ids, received_at 1 ms apart), then appends each copy's
event to its chain and moves the chain heads (proof_events.py): so `verify --database`, the
exporter's own check and bundle verification all hold, as for proofs uploaded one by one.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from proof_events import append_proof_events  # noqa: E402


def psql(url, sql, stdin=None):
    return subprocess.run(["psql", "-XAtq", "-v", "ON_ERROR_STOP=1", url, "-c", sql], input=stdin, check=True,
                          capture_output=True, text=True).stdout


def main(url, count, template, prefix):
    count = int(count)
    columns = [c for c in psql(url, """SELECT column_name FROM information_schema.columns
        WHERE table_name = 'proofs' AND table_schema = 'public' AND is_generated = 'NEVER' ORDER BY ordinal_position""").split()
        if c not in ("id", "delivery_id", "received_at")]
    # A sealed template opens only under its own proof id: the copies are written in clear, as
    # proofs stored before migration 0025 are (clear_templates.py opens the template once).
    if "sealing" in columns:
        exists = psql(url, "SELECT to_regclass('bench_clear_templates') IS NOT NULL").strip() == "t"
        have = exists and psql(url, f"""SELECT count(*) FROM bench_clear_templates c JOIN proofs p ON p.id = c.proof_id
            JOIN deliveries d ON d.id = p.delivery_id WHERE d.reference = '{template}'""").strip() != "0"
        if not have:
            subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "clear_templates.py"), url, template],
                           check=True, capture_output=True)
    clear = {"body": "c.body", "ink": "c.ink", "png": "c.png", "sealing": "0"} if "sealing" in columns else {}
    source = [clear.get(c, "p." + c) for c in columns]
    join = " JOIN bench_clear_templates c ON c.proof_id = p.id" if clear else ""
    start = int(psql(url, f"SELECT count(*) FROM deliveries WHERE reference LIKE '{prefix}%'"))
    psql(url, f"""
        INSERT INTO deliveries (reference, recipient_name, address, destination_lat, destination_lon, status, delivered_at, created_by)
        SELECT '{prefix}' || g, t.recipient_name, t.address, t.destination_lat, t.destination_lon, 'delivered',
            t.delivered_at + g * interval '1 millisecond', t.created_by
        FROM deliveries t, generate_series({start + 1}, {start + count}) g WHERE t.reference = '{template}';
        INSERT INTO proofs (id, delivery_id, received_at, {", ".join(columns)})
        SELECT gen_random_uuid(), d.id, p.received_at + g * interval '1 millisecond', {", ".join(source)}
        FROM proofs p JOIN deliveries t ON t.id = p.delivery_id AND t.reference = '{template}'{join},
            generate_series({start + 1}, {start + count}) g JOIN deliveries d ON d.reference = '{prefix}' || g;
        """)
    filled = append_proof_events(url, f"d.reference LIKE '{prefix}%'", f"delivery:{template}")
    print(f"filled {filled} proofs")


if __name__ == "__main__":
    main(*sys.argv[1:5])
