#!/usr/bin/env python3
"""Writes audit events with valid v2 hashes as COPY text for `verify_bench.sh`, and can sign a
version 2 checkpoint of the resulting heads (docs/audit.md: canonical bytes and messages).

  verify_fill.py events START COUNT STATE     COPY rows for seq START+1 .. START+COUNT on stdout;
                                              STATE (JSON: each chain's head) is read and rewritten
  verify_fill.py checkpoint STATE KEY.pem DIR writes DIR/checkpoint-….json signed with KEY (Ed25519 PEM),
                                              prints an INSERT for audit_checkpoints on stdout
  verify_fill.py heads STATE                  the UPDATE moving audit_chains to STATE's heads

Events are `proof_png_read` by the system on 5,000 subjects (no proof rows to re-hash: this measures
the chain walk), one millisecond apart from the start of the current month (its partition exists).
"""
import datetime, hashlib, json, os, sys

TAG = "countersign.audit/v2"


def text(value):
    if value is None:
        return b"\x00"
    data = value.encode()
    return b"\x01" + len(data).to_bytes(4, "big") + data


def chain_of(subject):
    digest = hashlib.sha256(subject.encode()).digest()
    return (digest[0] * 256 + digest[1]) % 16


def month_start_micros():
    now = datetime.datetime.now(datetime.timezone.utc)
    start = datetime.datetime(now.year, now.month, 1, tzinfo=datetime.timezone.utc)
    return int(start.timestamp()) * 1_000_000


def load(state_path):
    if os.path.exists(state_path):
        with open(state_path) as f:
            return json.load(f)
    return {"heads": {str(c): [0, "00" * 32] for c in range(16)}, "base": month_start_micros()}


def events(start, count, state_path):
    state = load(state_path)
    heads = {int(c): (seq, bytes.fromhex(h)) for c, (seq, h) in state["heads"].items()}
    out = sys.stdout.buffer
    tag = text(TAG)
    for seq in range(start + 1, start + count + 1):
        subject = f"delivery:B-{seq % 5000}"
        chain = chain_of(subject)
        micros = state["base"] + seq * 1000
        canonical = (tag + chain.to_bytes(2, "big", signed=True) + seq.to_bytes(8, "big", signed=True)
                     + micros.to_bytes(8, "big", signed=True) + text(None) + text("system") + text("proof_png_read")
                     + text(subject) + text(None) + text(None) + text(None) + text("{}"))
        prev = heads[chain][1]
        digest = hashlib.sha256(prev + canonical).digest()
        heads[chain] = (seq, digest)
        stamp = datetime.datetime.fromtimestamp(micros / 1_000_000, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f+00")
        out.write(f"{seq}\t{chain}\t2\t{stamp}\t\\N\tsystem\tproof_png_read\t{subject}\t\\N\t\\N\t\\N\t{{}}\t"
                  f"\\\\x{prev.hex()}\t\\\\x{digest.hex()}\n".encode())
    state["heads"] = {str(c): [s, h.hex()] for c, (s, h) in heads.items()}
    with open(state_path, "w") as f:
        json.dump(state, f)


def heads_sql(state_path):
    state = load(state_path)
    for chain, (seq, digest) in sorted(state["heads"].items(), key=lambda item: int(item[0])):
        if seq > 0:
            print(f"UPDATE audit_chains SET head_seq = {seq}, head_hash = '\\x{digest}'::bytea WHERE chain = {chain};")


def checkpoint(state_path, key_path, directory):
    from cryptography.hazmat.primitives import serialization
    state = load(state_path)
    with open(key_path, "rb") as f:
        key = serialization.load_pem_private_key(f.read(), password=None)
    public = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    heads = sorted((int(c), s, bytes.fromhex(h)) for c, (s, h) in state["heads"].items())
    signed_at = int(datetime.datetime.now(datetime.timezone.utc).timestamp() * 1_000_000)
    encoded = b"".join(c.to_bytes(2, "big", signed=True) + s.to_bytes(8, "big", signed=True) + h for c, s, h in heads)
    message = text("countersign.checkpoint/v2") + signed_at.to_bytes(8, "big", signed=True) + len(heads).to_bytes(4, "big") + encoded
    signature = key.sign(message)
    top = max(s for _, s, _ in heads)
    stamp = datetime.datetime.fromtimestamp(signed_at / 1_000_000, datetime.timezone.utc)
    resource = {
        "algorithm": "Ed25519", "version": 2, "seq": top, "signed_at_us": signed_at,
        "signed_at": stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{signed_at % 1_000_000:06d}Z",
        "public_key": public.hex(), "signature": signature.hex(),
        "chains": [{"chain": c, "head_seq": s, "head_hash": h.hex()} for c, s, h in heads],
    }
    name = f"checkpoint-{signed_at:020d}-{signature[:8].hex()}.json"
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, name), "w") as f:
        json.dump(resource, f, sort_keys=True, separators=(",", ":"))
    print(f"INSERT INTO audit_checkpoints (version, seq, heads, signed_at, algorithm, public_key, signature) VALUES "
          f"(2, {top}, '\\x{encoded.hex()}'::bytea, timestamptz 'epoch' + interval '1 microsecond' * {signed_at}, 'Ed25519', "
          f"'\\x{public.hex()}'::bytea, '\\x{signature.hex()}'::bytea);")
    print(public.hex(), file=sys.stderr)


if __name__ == "__main__":
    command = sys.argv[1]
    if command == "events":
        events(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
    elif command == "heads":
        heads_sql(sys.argv[2])
    elif command == "checkpoint":
        checkpoint(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        sys.exit(__doc__)
