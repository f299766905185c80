#!/usr/bin/env python3
"""Opens the sealed template proofs the benchmark fillers copy, into `bench_clear_templates`.

    clear_templates.py DATABASE_URL REFERENCE_PATTERN      (DATA_KEY_FILE names the data key file)

The fillers (export_fill.py, scale/grow.sql) copy proofs uploaded through the API thousands of
times in SQL. Uploaded proofs are sealed (migration 0025: AES-256-GCM under their delivery's data
key, bound to their proof id), so a byte copy would not open under another proof's id. The copies
are written as proofs stored before 0025 are: in clear, `sealing` 0. This script opens each
template (docs/audit.md, "Sealed proofs") and keeps its clear body, ink and PNG by proof id, in a
table the owner role can read; a template already in clear is kept as it is. Needs `cryptography`.
"""
import base64
import os
import subprocess
import sys

from cryptography.hazmat.primitives.ciphers.aead import AESGCM


def psql(url, sql, stdin=None):
    return subprocess.run(["psql", "-XAtq", "-v", "ON_ERROR_STOP=1", url, "-c", sql], input=stdin, check=True,
                          capture_output=True, text=True).stdout


def main(url, pattern):
    keys = {}
    with open(os.environ["DATA_KEY_FILE"]) as f:
        for line in f:
            fields = line.split("#", 1)[0].split()
            if len(fields) == 2:
                keys[fields[0]] = base64.b64decode(fields[1])
    rows = psql(url, f"""
        SELECT p.id, d.reference, p.sealing, coalesce(k.kek_id, ''), encode(coalesce(k.wrapped_key, ''), 'hex'),
            encode(p.body, 'hex'), encode(p.ink, 'hex'), encode(p.png, 'hex')
        FROM proofs p JOIN deliveries d ON d.id = p.delivery_id LEFT JOIN delivery_data_keys k ON k.delivery_id = d.id
        WHERE d.reference LIKE '{pattern}'""").splitlines()
    out = []
    for row in rows:
        proof, reference, sealing, kek, wrapped, *columns = row.split("|")
        boxes = [bytes.fromhex(c) for c in columns]
        if sealing != "0":
            aad = f"countersign-data-key/v1:{reference}".encode()
            wrapped = bytes.fromhex(wrapped)
            key = AESGCM(keys[kek]).decrypt(wrapped[:12], wrapped[12:], aad)
            boxes = [AESGCM(key).decrypt(box[:12], box[12:], f"countersign-proof/v1:{proof}:{field}".encode())
                     for box, field in zip(boxes, ("body", "ink", "png"))]
        out.append("\t".join([proof] + ["\\\\x" + b.hex() for b in boxes]))
    psql(url, "CREATE TABLE IF NOT EXISTS bench_clear_templates (proof_id uuid PRIMARY KEY, body bytea, ink bytea, png bytea)")
    subprocess.run(["psql", "-XAtq", "-v", "ON_ERROR_STOP=1", url, "-c",
                    "COPY bench_clear_templates FROM STDIN"], input="\n".join(out) + "\n", check=True, text=True,
                   capture_output=True) if out else None
    print(f"clear templates: {len(out)}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
