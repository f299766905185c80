"""What a device signature costs an upload, paired in one run (Benchmarks/device_signature_compare.sh).

Uploads the same proof body to fresh deliveries over one kept-alive connection, alternating an
unsigned upload and one signed by an approved device key (which goes first swaps every pair), and
prints each side's median and p90 latency and the median of the per-pair differences. The signed
side pays the key look-up and the Ed25519 verification; everything else is the same work.
"""
import base64
import hashlib
import http.client
import json
import statistics
import struct
import sys
import time
import urllib.parse
import uuid

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

base, courier, dispatcher, pairs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
url = urllib.parse.urlparse(base)
connection = http.client.HTTPConnection(url.hostname, url.port)


def call(method, path, token, body=None, headers=None):
    all_headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json", **(headers or {})}
    connection.request(method, path, body=body, headers=all_headers)
    response = connection.getresponse()
    return response.status, response.read()


def text(value):
    data = value.encode()
    return b"\x01" + struct.pack(">I", len(data)) + data


key = Ed25519PrivateKey.generate()
public = base64.b64encode(key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)).decode()
status, answer = call("POST", "/v1/devices", courier, json.dumps({"public_key": public, "label": "bench"}))
assert status == 201, answer
key_id = json.loads(answer)["id"]
status, answer = call("POST", f"/v1/devices/{key_id}/approve", dispatcher)
assert status == 200, answer

points = [[60 + i * 3.5, 100 + (i % 17) * 3, i * 12, 0.5] for i in range(120)]
body = json.dumps({"signer": {"name": "Ada Lovelace"}, "captured_at": "2026-11-25T07:00:00.000Z",
                   "location": {"lat": 52.5201, "lon": 13.4051, "accuracy_m": 8},
                   "ink": {"canvas": {"width": 600, "height": 200}, "strokes": [points[:60], points[60:]]}}).encode()
digest = hashlib.sha256(body).digest()

timings = {"unsigned": [], "signed": []}
differences = []
for pair in range(pairs):
    order = ["unsigned", "signed"] if pair % 2 == 0 else ["signed", "unsigned"]
    taken = {}
    for side in order:
        reference = f"BENCH-{uuid.uuid4().hex[:12]}"
        status, answer = call("POST", "/v1/deliveries", dispatcher,
                              json.dumps({"reference": reference, "recipient": {"name": "Ada"}, "address": "1 Main St"}))
        assert status in (200, 201), answer
        headers = {}
        if side == "signed":
            message = text("countersign.device-upload/v1") + text(reference) + text(key_id) + digest
            headers = {"Countersign-Device-Key": key_id,
                       "Countersign-Device-Signature": base64.b64encode(key.sign(message)).decode()}
        start = time.perf_counter()
        status, answer = call("POST", f"/v1/deliveries/{reference}/proof", courier, body, headers)
        taken[side] = time.perf_counter() - start
        assert status == 201, (side, status, answer)
    for side in order:
        timings[side].append(taken[side] * 1000)
    differences.append((taken["signed"] - taken["unsigned"]) * 1000)


def p90(values):
    return sorted(values)[int(len(values) * 0.9)]


for side in ("unsigned", "signed"):
    print(f"{side:9} uploads {len(timings[side]):5}  median {statistics.median(timings[side]):7.3f} ms  p90 {p90(timings[side]):7.3f} ms")
print(f"signed - unsigned, median of {pairs} pairs: {statistics.median(differences):+.3f} ms")
