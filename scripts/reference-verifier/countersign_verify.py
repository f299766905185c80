#!/usr/bin/env python3
"""A reference verifier for Countersign evidence, written from docs/audit.md alone (issue 19.7).

    countersign_verify.py bundle FILE.zip --public-key HEX        an export bundle (format v3), offline
    countersign_verify.py database --database-url URL --public-key HEX [--data-key-file FILE]
                                                                   the audit chains, checkpoints and proofs (psql;
                                                                   sealed proofs opened with the data key file)
    countersign_verify.py self-test                               the strict Ed25519 rules on known inputs

Every Ed25519 signature is checked strictly before `cryptography` verifies it (docs/api.md,
"Strict keys and signatures"): the key and R canonical, on the curve and not of small order, S below L.

Prints `OK ...` and exits 0, or one `INVALID <file or event>: <reason>` line per problem and exits 1.
Needs Python 3.9+ and the `cryptography` package (Ed25519); the database mode runs `psql`.
"""
import argparse
import base64
import hashlib
import hmac
import json
import os
import struct
import subprocess
import sys
import zipfile

from cryptography.exceptions import InvalidSignature, InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

TRAILER = {"manifest.json", "manifest.sig", "public_key.pem"}
PROOF_FILES = ["metadata.json", "signature.png", "signature.svg", "points", "ink"]
OMISSIBLE = {"points", "ink"}  # the raw dynamics, which an export may leave out (manifest "proof_files")


# --- the encodings of docs/audit.md ("The hash", "What the digests cover", "Signed checkpoints") ---

def text(value):
    if value is None:
        return b"\x00"
    data = value.encode("utf-8")
    return b"\x01" + struct.pack(">I", len(data)) + data


def details_of(details_text):
    """An event's details as docs/audit.md reads them: one object of strings, no name twice;
    anything else reads as no details at all (so every digest they should carry is missing)."""
    def members(pairs):
        names = [name for name, _ in pairs]
        if len(set(names)) != len(names) or not all(isinstance(value, str) for _, value in pairs):
            raise ValueError("not an object of strings with distinct names")
        return dict(pairs)
    try:
        details = json.loads(details_text, object_pairs_hook=members)
    except ValueError:
        return {}
    return details if isinstance(details, dict) else {}


def number(value):
    return b"\x00" if value is None else b"\x01" + struct.pack(">d", float(value))


def event_canonical(e):
    chain = struct.pack(">h", e["chain"]) if e["encoding"] == "countersign.audit/v2" else b""
    return (text(e["encoding"]) + chain + struct.pack(">q", e["seq"]) + struct.pack(">q", e["occurred_at_us"])
            + text(e["actor_key_id"]) + text(e["actor_role"]) + text(e["action"]) + text(e["subject"])
            + text(e["request_id"]) + text(e["client_address"]) + text(e["user_agent"]) + text(e["details_text"]))


def event_hash(e):
    return hashlib.sha256(bytes.fromhex(e["prev_hash"]) + event_canonical(e)).hexdigest()


def render_options(options):
    if not isinstance(options, dict):
        return b"\xff"
    out = struct.pack(">I", len(options))
    for name in sorted(options, key=lambda n: n.encode("utf-8")):
        value = options[name]
        out += text(name)
        if isinstance(value, bool):
            out += b"b" + (b"\x01" if value else b"\x00")
        elif isinstance(value, (int, float)):
            out += b"n" + struct.pack(">d", float(value))
        elif isinstance(value, str):
            out += b"s" + text(value)
        elif value is None:
            out += b"z"
        else:
            return b"\xff"
    return out


def facts_digest(f):
    """metadata_sha256: `f` holds the proof facts by their names in docs/audit.md."""
    out = (text("countersign.proof-facts/v1") + text(f["proof_id"]) + text(f["reference"]) + text(f["signer_name"])
           + struct.pack(">q", f["captured_at_us"]) + struct.pack(">i", f["captured_at_offset_min"]) + text(f["captured_at_text"])
           + struct.pack(">q", f["received_at_us"]) + number(f["location_lat"]) + number(f["location_lon"])
           + number(f["location_accuracy_m"]) + number(f["distance_to_destination_m"]) + number(f["geofence_radius_m"])
           + text(",".join(f["flags"])) + text(f["device_id"]) + text(f["device_model"]) + text(f["device_os"]) + text(f["device_app"])
           + text(f["body_content_type"]) + text(f["body_content_encoding"]) + text(f["ink_format"])
           + struct.pack(">iiii", f["point_count"], f["stroke_count"], f["png_width"], f["png_height"])
           + render_options(f["render_options"]) + text(f["algorithm_version"]) + text(f["uploaded_by"]))
    return hashlib.sha256(out).hexdigest()


def delivery_digest(d):
    """delivery_sha256: the delivery facts of "What the digests cover" (reference, recipient, address, destination)."""
    out = (text("countersign.delivery-facts/v1") + text(d["reference"]) + text(d["recipient_name"]) + text(d["address"])
           + number(d["destination_lat"]) + number(d["destination_lon"]))
    return hashlib.sha256(out).hexdigest()


def facts_of_metadata(doc):
    p = doc["proof"]
    location = p.get("location") or {}
    device = p["device"]
    return {
        "proof_id": p["proof_id"], "reference": p["reference"], "signer_name": p["signer"]["name"],
        "captured_at_us": p["captured_at_us"], "captured_at_offset_min": p["captured_at_offset_min"],
        "captured_at_text": p["captured_at_as_sent"], "received_at_us": p["received_at_us"],
        "location_lat": location.get("lat"), "location_lon": location.get("lon"), "location_accuracy_m": location.get("accuracy_m"),
        "distance_to_destination_m": p["distance_to_destination_m"], "geofence_radius_m": p["geofence_radius_m"],
        "flags": p["flags"], "device_id": device["id"], "device_model": device["model"], "device_os": device["os"],
        "device_app": device["app"], "body_content_type": p["original"]["content_type"],
        "body_content_encoding": p["original"]["content_encoding"], "ink_format": p["ink"]["format"],
        "point_count": p["ink"]["points"], "stroke_count": p["ink"]["strokes"], "png_width": p["png"]["width"],
        "png_height": p["png"]["height"], "render_options": p["render_options"], "algorithm_version": p["algorithm_version"],
        "uploaded_by": p["uploaded_by"]["key_id"],
    }


def checkpoint_message(c):
    if c.get("version", 1) == 1:
        return (text("countersign.checkpoint/v1") + struct.pack(">q", c["seq"]) + bytes.fromhex(c["head_hash"])
                + struct.pack(">q", c["signed_at_us"]))
    heads = b"".join(struct.pack(">hq", h["chain"], h["head_seq"]) + bytes.fromhex(h["head_hash"]) for h in c["chains"])
    return text("countersign.checkpoint/v2") + struct.pack(">q", c["signed_at_us"]) + struct.pack(">I", len(c["chains"])) + heads


# --- strict Ed25519 (docs/api.md, "Strict keys and signatures"): what OpenSSL's verify leaves unchecked ---

P = 2**255 - 19
D = -121665 * pow(121666, P - 2, P) % P
L = 2**252 + 27742317777372353535851937790883648493
SQRT_MINUS_ONE = pow(2, (P - 1) // 4, P)


def decode_point(encoding):
    """RFC 8032 section 5.1.3 without its leniency: ((x, y), None) for a canonical encoding of a
    point on edwards25519, else (None, why not)."""
    if len(encoding) != 32:
        return None, "not 32 bytes"
    y, sign = int.from_bytes(encoding, "little") & ((1 << 255) - 1), encoding[31] >> 7
    if y >= P:
        return None, "not canonical (y >= p)"
    x_squared = (y * y - 1) * pow(D * y * y + 1, P - 2, P) % P
    x = pow(x_squared, (P + 3) // 8, P)
    if (x * x - x_squared) % P != 0:
        x = x * SQRT_MINUS_ONE % P
    if (x * x - x_squared) % P != 0:
        return None, "not on the curve"
    if x == 0 and sign:
        return None, "not canonical (x = 0 with the sign bit set)"
    return ((P - x if x & 1 != sign else x), y), None


def point_add(a, b):
    (x1, y1), (x2, y2) = a, b
    t = D * x1 * x2 * y1 * y2 % P
    return (x1 * y2 + x2 * y1) * pow(1 + t, P - 2, P) % P, (y1 * y2 + x1 * x2) * pow(1 - t, P - 2, P) % P


def point_problem(encoding):
    """Why 32 bytes are not a usable point (a public key, or a signature's R), or None. A point of
    small order ([8]P = identity) is refused: under such a key a constant signature verifies."""
    point, problem = decode_point(encoding)
    if problem:
        return problem
    for _ in range(3):
        point = point_add(point, point)
    return "of small order" if point == (0, 1) else None


def ed25519_problem(public_key, signature):
    """Why the strict rules refuse this key and signature before any verification, or None."""
    problem = point_problem(public_key)
    if problem:
        return f"the public key is {problem}"
    if len(signature) != 64:
        return "the signature is not 64 bytes"
    if int.from_bytes(signature[32:], "little") >= L:
        return "the signature's S is not below L"
    problem = point_problem(signature[:32])
    return f"the signature's R is {problem}" if problem else None


def signature_holds(public_key_hex, signature_hex, message):
    try:
        public_key, signature = bytes.fromhex(public_key_hex), bytes.fromhex(signature_hex)
        if ed25519_problem(public_key, signature):
            return False
        Ed25519PublicKey.from_public_bytes(public_key).verify(signature, message)
        return True
    except (InvalidSignature, ValueError):
        return False


def device_upload_message(reference, key_id, body_sha256_hex):
    """docs/api.md, "Device signatures": what a device signs for one upload."""
    return text("countersign.device-upload/v1") + text(reference) + text(key_id) + bytes.fromhex(body_sha256_hex)


def device_problem(stated_key_id, stated_signature_hex, public_key_hex, details, reference):
    """What is wrong with a proof's device signature against its proof_recorded event, or None.
    stated_*: what the proof (row or metadata.json) says; public_key_hex: the key's public key."""
    if details.get("device_key_id") != stated_key_id:
        return f"its device key {stated_key_id} is not the one its event binds ({details.get('device_key_id')})"
    if details.get("device_signature") != stated_signature_hex:
        return f"its device signature differs from the one its event binds (key {stated_key_id})"
    if stated_key_id is None:
        return None
    if public_key_hex is None or not signature_holds(public_key_hex, stated_signature_hex,
                                                     device_upload_message(reference, stated_key_id, details["points_sha256"])):
        why = None
        if public_key_hex is not None:
            try:
                why = ed25519_problem(bytes.fromhex(public_key_hex), bytes.fromhex(stated_signature_hex))
            except ValueError:
                pass
        return f"its device signature does not verify with device key {stated_key_id}" + (f" ({why})" if why else "")
    return None


class Findings:
    def __init__(self):
        self.problems = []

    def fail(self, where, reason):
        self.problems.append(f"INVALID {where}: {reason}")

    def finish(self, summary):
        for line in self.problems:
            print(line)
        if not self.problems:
            print("OK " + summary)
        return 1 if self.problems else 0


# --- a bundle ---

def verify_bundle(path, pinned):
    found = Findings()
    fail = found.fail
    archive = zipfile.ZipFile(path)
    names = [info.filename for info in archive.infolist()]

    def read(name):
        try:
            return archive.read(name)
        except KeyError:
            fail(name, "missing from the bundle")
        except (zipfile.BadZipFile, OSError) as error:
            fail(name, f"cannot be read ({error})")
        return None

    manifest_bytes, signature, pem = read("manifest.json"), read("manifest.sig"), read("public_key.pem")
    if manifest_bytes is None or signature is None or pem is None:
        return found.finish("")
    signer = serialization.load_pem_public_key(pem).public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw).hex()
    if signer not in pinned:
        fail("public_key.pem", f"signed by key {signer}, which is not pinned")
    if not signature_holds(signer, signature.hex(), manifest_bytes):
        fail("manifest.sig", "the signature of manifest.json does not verify")
    manifest = json.loads(manifest_bytes)
    if manifest.get("format") != "countersign.export/v3":
        fail("manifest.json", f"format {manifest.get('format')}: this verifier reads version 3 bundles")
        return found.finish("")
    checkpoint = manifest["checkpoint"]
    if checkpoint["public_key"] != signer or not signature_holds(checkpoint["public_key"], checkpoint["signature"], checkpoint_message(checkpoint)):
        fail("manifest.json", "the checkpoint is not signed by the bundle's key")
    heads = {h["chain"]: (h["head_seq"], h["head_hash"]) for h in checkpoint["chains"]}
    # What each proof's folder holds: every file, or all but the raw dynamics (points, ink).
    proof_files = PROOF_FILES if manifest.get("proof_files") is None else manifest["proof_files"]  # absent or null: every file
    if proof_files not in (PROOF_FILES, [n for n in PROOF_FILES if n not in OMISSIBLE]):
        fail("manifest.json", f"proof_files {proof_files} is neither every file nor all but points and ink")
        return found.finish("")
    omitted = set(PROOF_FILES) - set(proof_files)

    # Every file but the trailer is in exactly one signed checksum file.
    listed = {}
    for entry in manifest["checksums"]:
        data = read(entry["path"])
        if data is None:
            continue
        if hashlib.sha256(data).hexdigest() != entry["sha256"] or len(data) != entry["bytes"]:
            fail(entry["path"], "differs from the SHA-256 in manifest.json")
        for line in data.decode("utf-8").splitlines():
            digest, _, name = line.partition("  ")
            listed[name] = digest
    checksum_files = {entry["path"] for entry in manifest["checksums"]}
    digests = {}
    for name in names:
        if name in TRAILER or name in checksum_files:
            continue
        data = read(name)
        if data is None:
            continue
        digests[name] = hashlib.sha256(data).hexdigest()
        if name not in listed:
            fail(name, "is not in any checksums file")
        elif listed[name] != digests[name]:
            fail(name, f"SHA-256 {digests[name]} differs from the checksums file's {listed[name]}")
    for name in listed:
        if name not in digests and name not in names:
            fail(name, "is listed in a checksums file but missing from the bundle")

    # The audit segments: re-hash every event, follow prev_hash, and end at the signed head.
    events = {}
    event_count = 0
    segments = sorted(name for name in names if name.startswith("audit/"))
    by_chain = {}
    for name in segments:
        by_chain.setdefault(int(name.split("/")[1][len("chain-"):]), []).append(name)
    for chain, files in sorted(by_chain.items()):
        last = None
        for name in files:
            for line in read(name).decode("utf-8").splitlines():
                e = json.loads(line)
                event_count += 1
                where = f"{name} event seq {e['seq']}"
                if e["chain"] != chain:
                    fail(where, f"is on chain {e['chain']}, not {chain}")
                if event_hash(e) != e["hash"]:
                    fail(where, "its hash does not match its fields (the event was altered)")
                if last is not None and (e["prev_hash"] != last[1] or e["seq"] <= last[0]):
                    fail(where, f"does not follow seq {last[0]} of chain {chain}")
                last = (e["seq"], e["hash"])
                if e["action"] == "proof_recorded":
                    details = details_of(e["details_text"])
                    events[details.get("proof_id")] = (e, details)
        if heads.get(chain) != last:
            fail(files[-1], f"chain {chain} ends at {last}, but the checkpoint signs {heads.get(chain)}")

    # Each proof: its files against metadata.json, metadata.json and the files against the event.
    proofs = 0
    folders = sorted({name.rsplit("/", 1)[0] + "/" for name in names if name.startswith("deliveries/")})
    for folder in folders:
        proofs += 1
        meta = read(folder + "metadata.json")
        if meta is None:
            continue
        doc = json.loads(meta)
        proof = doc["proof"]
        if "deliveries/" + proof["reference"].replace(":", "%3A") + "/" != folder or doc["delivery"]["reference"] != proof["reference"]:
            fail(folder + "metadata.json", "names another delivery than its folder")
        for name in PROOF_FILES[1:]:
            described = doc["files"].get(name, {})
            if name in omitted:
                # Left out by the exporter: absent, listed as omitted, and its listed digest stands
                # in for it in the checks against the event below.
                if folder + name in digests:
                    fail(folder + name, "is in the bundle, but the manifest says the export leaves it out")
                elif described.get("omitted") is not True or "sha256" not in described:
                    fail(folder + "metadata.json", f"does not list {name} as omitted")
                else:
                    digests[folder + name] = described["sha256"]
            elif folder + name not in digests:
                fail(folder + name, "missing from the bundle")
            elif described.get("omitted", False) is not False:
                fail(folder + "metadata.json", f"lists {name} as omitted, but the bundle holds it")
            elif described.get("sha256") != digests[folder + name]:
                fail(folder + name, "differs from the SHA-256 in metadata.json")
        if proof["original"]["sha256"] != digests.get(folder + "points") or proof["png"]["sha256"] != digests.get(folder + "signature.png"):
            fail(folder + "metadata.json", "original.sha256 or png.sha256 does not describe the files")
        recorded = events.pop(proof["proof_id"], None)
        if recorded is None:
            fail(folder, f"proof {proof['proof_id']} has no proof_recorded event in the audit segments")
            continue
        event, details = recorded
        at = f"event seq {event['seq']} (chain {event['chain']})"
        if event["subject"] != "delivery:" + proof["reference"]:
            fail(folder + "metadata.json", f"belongs to delivery:{proof['reference']}, {at} to {event['subject']}")
        for name, key in (("points", "points_sha256"), ("signature.png", "png_sha256"), ("ink", "ink_sha256")):
            if key in details and details[key] != digests.get(folder + name):
                fail(folder + name, f"differs from {key} of {at}")
        if "metadata_sha256" in details and details["metadata_sha256"] != facts_digest(facts_of_metadata(doc)):
            fail(folder + "metadata.json", f"its facts do not hash to metadata_sha256 of {at}")
        if "metadata_commitment" in details:
            salt = doc.get("commitment_salt")
            if not isinstance(salt, str) or len(salt) != 64:
                fail(folder + "metadata.json", f"states no commitment_salt, but {at} binds metadata_commitment")
            elif details["metadata_commitment"] != commitment(bytes.fromhex(salt), facts_digest(facts_of_metadata(doc))):
                fail(folder + "metadata.json", f"its facts do not commit to metadata_commitment of {at} under its commitment_salt")
        # A device-signed upload: the document names the key and its public key (whether that key was
        # registered and approved is in the database's device_key_* events, not in the bundle).
        device = doc.get("device_signature")
        signature_hex = base64.b64decode(device["signature"]).hex() if device else None
        public_key_hex = base64.b64decode(device["public_key"]).hex() if device else None
        problem = device_problem(device["key_id"] if device else None, signature_hex, public_key_hex, details, proof["reference"])
        if problem:
            fail(folder + "metadata.json", f"{problem} ({at})")
    if proofs != manifest["proof_count"]:
        fail("manifest.json", f"states {manifest['proof_count']} proofs, the bundle holds {proofs}")
    return found.finish(f"bundle {path}: {proofs} proofs, {event_count} audit events, signed by {signer}")


# --- a database ---

# The proof facts of "What the digests cover", by those names, from `proofs p JOIN deliveries d`.
PROOF_FACTS = """p.id::text AS proof_id, d.reference::text AS reference, p.signer_name AS signer_name,
    (extract(epoch FROM p.captured_at) * 1000000)::int8 AS captured_at_us, p.captured_at_offset_min, p.captured_at_text,
    (extract(epoch FROM p.received_at) * 1000000)::int8 AS received_at_us, p.location_lat::float8 AS location_lat,
    p.location_lon::float8 AS location_lon, p.location_accuracy_m::float8 AS location_accuracy_m,
    p.distance_to_destination_m::float8 AS distance_to_destination_m, p.geofence_radius_m::float8 AS geofence_radius_m,
    p.flags::text[] AS flags, p.device_id, p.device_model, p.device_os, p.device_app, p.body_content_type,
    p.body_content_encoding, p.ink_format, p.point_count, p.stroke_count, p.png_width, p.png_height,
    p.render_options, p.algorithm_version, p.uploaded_by::text AS uploaded_by"""


# --- sealed proofs (docs/audit.md, "Sealed proofs") ---

def read_data_keys(path):
    """The key-encryption keys of a DATA_KEY_FILE: {id: 32 bytes}; lines `<id> <base64>`, `#` comments."""
    keys = {}
    with open(path) as f:
        for line in f:
            fields = line.split("#", 1)[0].split()
            if not fields:
                continue
            if len(fields) != 2:
                raise SystemExit(f"{path}: a line is not `<id> <base64 key>`")
            keys[fields[0]] = base64.b64decode(fields[1])
    return keys


def open_sealed(box, key, binding):
    """A box `nonce (12) || ciphertext || tag (16)` opened with AES-256-GCM, `binding` as associated data; None if it does not."""
    try:
        return AESGCM(key).decrypt(box[:12], box[12:], binding.encode())
    except InvalidTag:
        return None


def unwrap_data_key(row, reference, kek):
    """The data key of delivery `reference` from its `delivery_data_keys` row, or ValueError naming why not."""
    if row is None:
        raise ValueError(f"is sealed, but delivery {reference} has no data key")
    if row["kek_id"] not in kek:
        raise ValueError(f"its data key is wrapped by key {row['kek_id']}, which the data key file lacks")
    key = open_sealed(bytes.fromhex(row["wrapped"]), kek[row["kek_id"]], f"countersign-data-key/v1:{reference}")
    if key is None or len(key) != 32:
        raise ValueError(f"the data key of delivery {reference} does not open")
    return key


def commitment_salt(data_key):
    """The salt a delivery's commitments are made with: HMAC-SHA256(data key, label) ("Salted commitments")."""
    return hmac.new(data_key, b"countersign.commitment-salt/v1", hashlib.sha256).digest()


def commitment(salt, digest_hex):
    """HMAC-SHA256(salt, the plain digest's 32 bytes), in hex: what an event binds instead of that digest."""
    return hmac.new(salt, bytes.fromhex(digest_hex), hashlib.sha256).hexdigest()


def rows(url, sql):
    query = f"SELECT row_to_json(t) FROM ({sql}) t"
    output = subprocess.run(["psql", "-XAtq", "-v", "ON_ERROR_STOP=1", url, "-c", query], check=True, capture_output=True, text=True)
    return [json.loads(line) for line in output.stdout.splitlines() if line]


def verify_database(url, pinned, kek):
    found = Findings()
    fail = found.fail
    events = rows(url, """
        SELECT seq, chain, CASE encoding WHEN 1 THEN 'countersign.audit/v1' ELSE 'countersign.audit/v2' END AS encoding,
            (extract(epoch FROM occurred_at) * 1000000)::int8 AS occurred_at_us, actor_key_id::text AS actor_key_id, actor_role,
            action, subject, request_id, client_address, user_agent, details_text,
            encode(prev_hash, 'hex') AS prev_hash, encode(hash, 'hex') AS hash
        FROM audit_events ORDER BY seq, occurred_at""")
    heads = {}
    by_hash = {}
    recorded = {}
    created = {}  # delivery id -> (event, details) of its delivery_created event
    devices = {}  # key id -> {action: (seq, details)} of its device_key_* events
    erasure_events = set()  # delivery ids of the delivery_erased events ("Erased deliveries")
    for e in events:
        where = f"event seq {e['seq']} (chain {e['chain']})"
        if event_hash(e) != e["hash"]:
            fail(where, "its hash does not match its fields (the event was altered)")
        previous = heads.get(e["chain"], (0, "0" * 64))
        if e["prev_hash"] != previous[1]:
            fail(where, f"prev_hash is not the hash of seq {previous[0]} of its chain")
        heads[e["chain"]] = (e["seq"], e["hash"])
        by_hash[(e["chain"], e["seq"])] = e["hash"]
        if e["action"] == "proof_recorded":
            details = details_of(e["details_text"])
            recorded[details.get("proof_id")] = (e, details)
        elif e["action"] == "delivery_created":
            details = details_of(e["details_text"])
            created[details.get("delivery_id")] = (e, details)
        elif e["action"] == "delivery_erased":
            erasure_events.add(details_of(e["details_text"]).get("delivery_id"))
        elif e["action"] in ("device_key_registered", "device_key_approved", "device_key_revoked"):
            key = devices.setdefault(e["subject"].removeprefix("device_key:"), {})
            key[e["action"]] = (e["seq"], details_of(e["details_text"]))
    for row in rows(url, "SELECT chain, head_seq, encode(head_hash, 'hex') AS head_hash FROM audit_chains ORDER BY chain"):
        if heads.get(row["chain"], (0, "0" * 64)) != (row["head_seq"], row["head_hash"]):
            fail(f"audit_chains chain {row['chain']}", f"names seq {row['head_seq']}, the chain ends at {heads.get(row['chain'])}")
    checkpoints = rows(url, """
        SELECT id, version, seq, encode(head_hash, 'hex') AS head_hash, encode(heads, 'hex') AS heads,
            (extract(epoch FROM signed_at) * 1000000)::int8 AS signed_at_us, encode(public_key, 'hex') AS public_key,
            encode(signature, 'hex') AS signature
        FROM audit_checkpoints ORDER BY id""")
    for c in checkpoints:
        where = f"checkpoint {c['id']}"
        if c["version"] == 2:
            raw = bytes.fromhex(c["heads"])
            c["chains"] = [{"chain": struct.unpack(">h", raw[i:i + 2])[0], "head_seq": struct.unpack(">q", raw[i + 2:i + 10])[0],
                            "head_hash": raw[i + 10:i + 42].hex()} for i in range(0, len(raw), 42)]
        else:
            c["chains"] = [{"chain": 0, "head_seq": c["seq"], "head_hash": c["head_hash"]}]
        if c["public_key"] not in pinned:
            fail(where, f"signed by key {c['public_key']}, which is not pinned")
        if not signature_holds(c["public_key"], c["signature"], checkpoint_message(c)):
            fail(where, "its signature does not verify")
        for head in c["chains"]:
            if head["head_seq"] != 0 and by_hash.get((head["chain"], head["head_seq"])) != head["head_hash"]:
                fail(where, f"signs seq {head['head_seq']} of chain {head['chain']}, which the chain does not hold")
    # A clear proof (sealing 0) is hashed by the database; a sealed one (sealing 1) is fetched and
    # opened with the data key of the delivery its event names ("Sealed proofs").
    proofs = rows(url, f"""
        SELECT {PROOF_FACTS}, p.sealing::int AS sealing,
            CASE WHEN p.sealing = 0 THEN encode(sha256(p.body), 'hex') ELSE encode(p.body, 'hex') END AS points_sha256,
            CASE WHEN p.sealing = 0 THEN encode(sha256(p.png), 'hex') ELSE encode(p.png, 'hex') END AS png_sha256,
            CASE WHEN p.sealing = 0 THEN encode(sha256(p.ink), 'hex') ELSE encode(p.ink, 'hex') END AS ink_sha256,
            p.device_key_id::text AS device_key_id, encode(p.device_signature, 'hex') AS device_signature,
            encode(p.body_sha256, 'hex') AS stored_points_sha256, encode(p.png_sha256, 'hex') AS stored_png_sha256
        FROM proofs p JOIN deliveries d ON d.id = p.delivery_id ORDER BY p.received_at, p.id""")
    # An erased delivery (sealing 2: its bytes and data key gone) must have its delivery_erased event;
    # of its proofs only the stored digests are left to compare with the proof's event.
    erased = rows(url, "SELECT id::text AS id, reference::text AS reference FROM deliveries WHERE erased_at IS NOT NULL ORDER BY reference")
    for d in erased:
        if d["id"] not in erasure_events:
            fail(f"delivery {d['reference']}", "is erased, but no delivery_erased event records it")
    wrapped_keys = {r["reference"]: r for r in rows(url, """
        SELECT d.reference::text AS reference, k.kek_id, encode(k.wrapped_key, 'hex') AS wrapped
        FROM delivery_data_keys k JOIN deliveries d ON d.id = k.delivery_id""")}
    # Each live delivery's facts against its delivery_created event: the plain digest, or the
    # commitment under the salt of its data key ("Salted commitments"). Erased ones have no facts left.
    for d in rows(url, """
        SELECT id::text AS id, reference::text AS reference, recipient_name, address, destination_lat::float8 AS destination_lat,
            destination_lon::float8 AS destination_lon FROM deliveries WHERE erased_at IS NULL ORDER BY seq"""):
        event = created.get(d["id"])
        if event is None:
            continue  # deliveries from before the audit log, or inserted without events, are not bound
        e, details = event
        where, at = f"delivery {d['reference']}", f"event seq {e['seq']} (chain {e['chain']})"
        if "delivery_sha256" in details and details["delivery_sha256"] != delivery_digest(d):
            fail(where, f"its facts do not hash to delivery_sha256 of {at}")
        if "delivery_commitment" in details:
            try:
                salt = commitment_salt(unwrap_data_key(wrapped_keys.get(d["reference"]), d["reference"], kek))
            except ValueError as problem:
                fail(where, str(problem))
                continue
            if details["delivery_commitment"] != commitment(salt, delivery_digest(d)):
                fail(where, f"its facts do not commit to delivery_commitment of {at}")
    for p in proofs:
        where = f"proof {p['proof_id']} (delivery {p['reference']})"
        event = recorded.get(p["proof_id"])
        if event is None:
            fail(where, "has no proof_recorded event")
            continue
        e, details = event
        at = f"event seq {e['seq']} (chain {e['chain']})"
        if p["sealing"] == 2:
            if e["subject"] != "delivery:" + p["reference"]:
                fail(where, f"lies under delivery {p['reference']}, {at} names {e['subject']}")
            for key in ("points_sha256", "png_sha256"):
                if details.get(key) != p["stored_" + key]:
                    fail(where, f"its stored {key} differs from {at}")
            continue
        salt = None
        if p["sealing"] != 0:
            reference = e["subject"].removeprefix("delivery:")
            try:
                data_key = unwrap_data_key(wrapped_keys.get(reference), reference, kek)
            except ValueError as problem:
                fail(where, str(problem))
                continue
            for key, field in (("points_sha256", "body"), ("png_sha256", "png"), ("ink_sha256", "ink")):
                opened = open_sealed(bytes.fromhex(p[key]), data_key, f"countersign-proof/v1:{p['proof_id']}:{field}")
                p[key] = hashlib.sha256(opened).hexdigest() if opened is not None else "does not open"
            salt = commitment_salt(data_key)
        if e["subject"] != "delivery:" + p["reference"]:
            fail(where, f"lies under delivery {p['reference']}, {at} names {e['subject']}")
        for key in ("points_sha256", "png_sha256", "ink_sha256"):
            if key in details and details[key] != p[key]:
                fail(where, f"{key} differs from {at}")
        if "metadata_sha256" in details and details["metadata_sha256"] != facts_digest(p):
            fail(where, f"its facts do not hash to metadata_sha256 of {at}")
        if "metadata_commitment" in details and (salt is None or details["metadata_commitment"] != commitment(salt, facts_digest(p))):
            fail(where, f"its facts do not commit to metadata_commitment of {at}")
        # A device-signed upload: the public key is the one the key's registration event bound, by
        # the proof's uploader, approved before the proof's event and not revoked before it.
        key = devices.get(p["device_key_id"], {}) if p["device_key_id"] else {}
        registered = key.get("device_key_registered")
        problem = device_problem(p["device_key_id"], p["device_signature"], registered[1].get("public_key") if registered else None,
                                 details, p["reference"])
        if problem:
            fail(where, f"{problem} ({at})")
        elif p["device_key_id"]:
            approved, revoked = key.get("device_key_approved"), key.get("device_key_revoked")
            if registered[1].get("registered_by") != p["uploaded_by"]:
                fail(where, f"device key {p['device_key_id']} was registered by another API key")
            if approved is None or approved[0] > e["seq"] or (revoked is not None and revoked[0] < e["seq"]):
                fail(where, f"device key {p['device_key_id']} was not approved when {at} was recorded")
    erased_note = f", {len(erased)} erased deliveries ({', '.join(d['reference'] for d in erased)})" if erased else ""
    return found.finish(f"database: {len(events)} events in {len(heads)} chains, {len(checkpoints)} checkpoints, {len(proofs)} proofs"
                        + erased_note)


# --- self-test: the strict rules on known inputs ---

SMALL_ORDER = [  # the 8 points P with [8]P = identity, canonically encoded ("Taming the many EdDSAs", 2020)
    "0100000000000000000000000000000000000000000000000000000000000000", "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    "0000000000000000000000000000000000000000000000000000000000000000", "0000000000000000000000000000000000000000000000000000000000000080",
    "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05", "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85",
    "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a", "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa",
]
RFC8032_TEST_1 = ("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
                  "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b")


def self_test():
    found = Findings()
    key, signature = RFC8032_TEST_1
    if not signature_holds(key, signature, b""):
        found.fail("RFC 8032 TEST 1", "the signature of the empty message does not verify")
    stretched = bytes.fromhex(signature[:64]) + (int.from_bytes(bytes.fromhex(signature[64:]), "little") + L).to_bytes(32, "little")
    if signature_holds(key, stretched.hex(), b""):
        found.fail("RFC 8032 TEST 1", "S + L verifies")
    for encoding in SMALL_ORDER:
        if point_problem(bytes.fromhex(encoding)) != "of small order":
            found.fail(encoding, f"is {point_problem(bytes.fromhex(encoding)) or 'accepted'}, not refused as of small order")
    noncanonical = ["0100000000000000000000000000000000000000000000000000000000000080",  # the identity, sign bit set
                    "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",  # y = p
                    "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"]  # y = p + 18
    for encoding in noncanonical:
        if not (point_problem(bytes.fromhex(encoding)) or "").startswith("not canonical"):
            found.fail(encoding, "is not refused as not canonical")
    if point_problem(bytes.fromhex("02" + "00" * 31)) != "not on the curve":
        found.fail("y = 2", "is not refused as off the curve")
    identity, forged = SMALL_ORDER[0], SMALL_ORDER[0] + "00" * 32  # R = identity, S = 0: OpenSSL accepts it for any message
    if signature_holds(identity, forged, b"any body"):
        found.fail("the identity key", "its constant signature verifies")
    return found.finish(f"self-test: RFC 8032 TEST 1, S + L, {len(SMALL_ORDER)} small-order points, {len(noncanonical)} non-canonical, "
                        "one off-curve, the identity forgery")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["bundle", "database", "self-test"])
    parser.add_argument("path", nargs="?")
    parser.add_argument("--database-url")
    parser.add_argument("--public-key", action="append", help="a pinned Ed25519 key, 64 hex digits (repeatable; not for self-test)")
    parser.add_argument("--data-key-file", default=os.environ.get("DATA_KEY_FILE"),
                        help="the deployment's DATA_KEY_FILE, to open sealed proofs (database mode; default $DATA_KEY_FILE)")
    args = parser.parse_args()
    if args.what == "self-test":
        return self_test()
    if not args.public_key:
        parser.error("--public-key is required")
    pinned = {key.lower() for key in args.public_key}
    if args.what == "bundle":
        return verify_bundle(args.path, pinned)
    return verify_database(args.database_url, pinned, read_data_keys(args.data_key_file) if args.data_key_file else {})


if __name__ == "__main__":
    sys.exit(main())
