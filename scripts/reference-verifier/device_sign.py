#!/usr/bin/env python3
"""A device key for the reference verifier's test (run.sh): what a courier app does, in Python.

    device_sign.py keygen SEED_FILE                       prints the public key (base64)
    device_sign.py sign SEED_FILE REFERENCE KEY_ID BODY   prints the upload's signature (base64)

The message is countersign_verify.py's (docs/api.md, "Device signatures"), so a 201 from the
server for a signature made here shows that the verifier reads the message as the server does.
"""
import base64
import hashlib
import os
import sys

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from countersign_verify import device_upload_message


def main(command, seed_file, *rest):
    if command == "keygen":
        seed = os.urandom(32)
        with open(seed_file, "wb") as out:
            out.write(seed)
        public = Ed25519PrivateKey.from_private_bytes(seed).public_key()
        print(base64.b64encode(public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)).decode())
    elif command == "sign":
        reference, key_id, body = rest
        with open(seed_file, "rb") as source:
            key = Ed25519PrivateKey.from_private_bytes(source.read())
        with open(body, "rb") as source:
            digest = hashlib.sha256(source.read()).hexdigest()
        print(base64.b64encode(key.sign(device_upload_message(reference, key_id, digest))).decode())
    else:
        raise SystemExit(f"unknown command {command}")


if __name__ == "__main__":
    main(*sys.argv[1:])
