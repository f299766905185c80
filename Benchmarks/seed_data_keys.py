#!/usr/bin/env python3
"""Gives every delivery without a data key one, wrapped as the service wraps it (docs/audit.md,
"Sealed proofs"), so that deliveries a benchmark inserts by SQL are what `POST /v1/deliveries`
makes since decision 0045: a delivery with its key, under which the upload seals.

    seed_data_keys.py DATABASE_URL DATA_KEY_FILE

The active key of DATA_KEY_FILE (the last line) wraps each new 32-byte key with AES-256-GCM,
associated data `countersign-data-key/v1:<reference>`; the rows go in by one COPY.
"""
import base64
import os
import subprocess
import sys

from cryptography.hazmat.primitives.ciphers.aead import AESGCM


def main(url, key_file):
    lines = [line.split("#", 1)[0].split() for line in open(key_file)]
    kek_id, kek = [(fields[0], base64.b64decode(fields[1])) for fields in lines if fields][-1]
    wrapping = AESGCM(kek)
    listed = subprocess.run(["psql", "-XAtq", "-v", "ON_ERROR_STOP=1", url, "-c",
                             "SELECT id, reference FROM deliveries d WHERE NOT EXISTS "
                             "(SELECT 1 FROM delivery_data_keys k WHERE k.delivery_id = d.id)"],
                            check=True, capture_output=True, text=True).stdout.split("\n")
    rows = []
    for line in listed:
        if not line:
            continue
        delivery_id, reference = line.split("|", 1)
        nonce = os.urandom(12)
        wrapped = nonce + wrapping.encrypt(nonce, os.urandom(32), f"countersign-data-key/v1:{reference}".encode())
        rows.append(f"{delivery_id}\t{kek_id}\t\\\\x{wrapped.hex()}\n")
    subprocess.run(["psql", "-XAtq", "-v", "ON_ERROR_STOP=1", url, "-c",
                    "COPY delivery_data_keys (delivery_id, kek_id, wrapped_key) FROM STDIN"],
                   input="".join(rows), check=True, text=True)
    print(f"{len(rows)} data keys", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
