#!/usr/bin/env python3
"""Makes a tampered copy of an export bundle for the reference verifier's test (run.sh).

    tamper.py IN.zip OUT.zip png|metadata|remove|resign|event|device FOLDER

png: flips one byte of FOLDER/signature.png; metadata: changes the signer's name in
FOLDER/metadata.json (and its line in the checksums, so only the audit event can tell); remove:
drops FOLDER's files; resign: signs manifest.json with a new key and ships that key; event: changes
the subject of the first audit event naming FOLDER's delivery; device: another device signature in
FOLDER/metadata.json (checksums made to agree, so only the audit event and the key can tell).
"""
import hashlib
import sys
import zipfile

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey


def main(source, target, kind, folder):
    reference = folder.rstrip("/").split("/")[-1]
    with zipfile.ZipFile(source) as archive:
        files = [(info.filename, archive.read(info.filename)) for info in archive.infolist()]
    contents = dict(files)
    replaced = {}
    if kind == "png":
        data = bytearray(contents[folder + "signature.png"])
        data[len(data) // 2] ^= 0x01
        replaced[folder + "signature.png"] = bytes(data)
    elif kind == "metadata":
        old = contents[folder + "metadata.json"]
        new = old.replace(b'"signer":{"name":"', b'"signer":{"name":"X', 1)
        assert new != old
        replaced[folder + "metadata.json"] = new
        for name, data in files:
            if name.startswith("checksums/") and hashlib.sha256(old).hexdigest().encode() in data:
                replaced[name] = data.replace(hashlib.sha256(old).hexdigest().encode(), hashlib.sha256(new).hexdigest().encode())
    elif kind == "device":
        old = contents[folder + "metadata.json"]
        marker = b'"device_signature":{'
        start = old.index(marker)
        at = old.index(b'"signature":"', start) + len(b'"signature":"')
        # Another signature of the right shape: the first character of its base64 changed.
        new = old[:at] + (b"B" if old[at:at + 1] != b"B" else b"C") + old[at + 1:]
        replaced[folder + "metadata.json"] = new
        for name, data in files:
            if name.startswith("checksums/") and hashlib.sha256(old).hexdigest().encode() in data:
                replaced[name] = data.replace(hashlib.sha256(old).hexdigest().encode(), hashlib.sha256(new).hexdigest().encode())
    elif kind == "resign":
        key = Ed25519PrivateKey.generate()
        replaced["manifest.sig"] = key.sign(contents["manifest.json"])
        replaced["public_key.pem"] = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    elif kind == "event":
        needle = ('"subject":"delivery:' + reference + '"').encode()
        name = next(name for name, data in files if name.startswith("audit/") and needle in data)
        replaced[name] = contents[name].replace(needle, ('"subject":"delivery:' + reference + '-X"').encode(), 1)
    elif kind != "remove":
        raise SystemExit(f"unknown kind {kind}")
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as out:
        for name, data in files:
            if kind == "remove" and name.startswith(folder):
                continue
            out.writestr(name, replaced.get(name, data))


if __name__ == "__main__":
    main(*sys.argv[1:5])
