"""Chain-valid `proof_recorded` events for proofs a benchmark copied in SQL (export_fill.py, scale.sh).

    append_proof_events(url, where, model_subjects)
    python3 Benchmarks/proof_events.py DATABASE_URL WHERE MODEL_SUBJECTS

Appends one event for every proof matching `where` (SQL over `proofs p JOIN deliveries d`) that has
no event yet, in order of receipt, each linked to its chain's head, then moves the heads: so
`verify --database`, the exporter's own check and bundle verification hold for the copies as for
proofs uploaded one by one. The hashes use scripts/reference-verifier's encodings (written from
docs/audit.md). A copy's PNG, body and ink are a real upload's: the ink digest and the actor come
from that upload's event (the events of `model_subjects`, an SQL LIKE pattern), found by its PNG and
body digests. Rows are streamed (psql FETCH_COUNT, COPY FROM STDIN), so a million copies take the
memory of one.
"""
import datetime
import hashlib
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "scripts", "reference-verifier"))
from countersign_verify import PROOF_FACTS, event_hash, facts_digest  # noqa: E402

FACTS = f"""
    SELECT {PROOF_FACTS},
        encode(p.png_sha256, 'hex') AS png_sha256, encode(p.body_sha256, 'hex') AS points_sha256
    FROM proofs p JOIN deliveries d ON d.id = p.delivery_id
    WHERE ({{where}}) AND NOT EXISTS (SELECT 1 FROM audit_events e WHERE e.action = 'proof_recorded' AND e.subject = 'delivery:' || d.reference)"""


def psql(url, sql):
    return subprocess.run(["psql", "-XAtq", "-v", "ON_ERROR_STOP=1", url, "-c", sql], check=True,
                          capture_output=True, text=True).stdout


def stream(url, sql):
    """The rows of `sql` as dicts, fetched 10,000 at a time."""
    query = f"SELECT row_to_json(t) FROM ({sql}) t"
    reader = subprocess.Popen(["psql", "-XAtq", "-v", "ON_ERROR_STOP=1", "-v", "FETCH_COUNT=10000", url, "-c", query],
                              stdout=subprocess.PIPE, text=True)
    for line in reader.stdout:
        if line.strip():
            yield json.loads(line)
    if reader.wait() != 0:
        raise SystemExit("proof_events: psql failed reading the proofs")


def psql_time(micros):
    seconds, fraction = divmod(micros, 1_000_000)
    moment = datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc)
    return moment.strftime("%Y-%m-%d %H:%M:%S") + f".{fraction:06d}+00"


def copy_text(value):
    """A value in COPY's text format (NULL as \\N; backslash, tab and newlines escaped)."""
    if value is None:
        return "\\N"
    return value.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def append_proof_events(url, where, model_subjects):
    models = {}
    for row in stream(url, f"""SELECT details_text, actor_key_id::text AS actor_key_id, actor_role FROM audit_events
                                WHERE action = 'proof_recorded' AND subject LIKE '{model_subjects}'"""):
        details = json.loads(row["details_text"])
        models[(details["png_sha256"], details["points_sha256"])] = (details["ink_sha256"], row["actor_key_id"], row["actor_role"])
    if not models:
        raise SystemExit(f"proof_events: no proof_recorded event of {model_subjects} to copy from")
    count = int(psql(url, f"SELECT count(*) FROM ({FACTS.format(where=where)}) t"))
    if count == 0:
        return 0
    heads = {int(chain): (int(seq), head) for chain, seq, head in
             (line.split("|") for line in psql(url, "SELECT chain, head_seq, encode(head_hash, 'hex') FROM audit_chains").split())}
    base = int(psql(url, f"SELECT setval('audit_events_seq', nextval('audit_events_seq') + {count})")) - count
    copy = ("COPY audit_events (seq, occurred_at, actor_key_id, actor_role, action, subject, request_id, client_address, user_agent, "
            "details_text, prev_hash, hash, chain, encoding) FROM STDIN")
    writer = subprocess.Popen(["psql", "-XAtq", "-v", "ON_ERROR_STOP=1", url, "-c", copy], stdin=subprocess.PIPE, text=True)
    written = 0
    for f in stream(url, FACTS.format(where=where) + " ORDER BY p.received_at, p.id"):
        if written == count:
            break  # a proof stored since the count: left without an event, as the count reserved no seq for it
        ink, actor, role = models[(f["png_sha256"], f["points_sha256"])]
        subject = "delivery:" + f["reference"]
        chain = int.from_bytes(hashlib.sha256(subject.encode()).digest()[:2], "big") % 16
        bound = {"ink_sha256": ink, "metadata_sha256": facts_digest(f), "png_sha256": f["png_sha256"],
                 "points_sha256": f["points_sha256"], "proof_id": f["proof_id"]}
        event = {"seq": base + written + 1, "chain": chain, "encoding": "countersign.audit/v2", "occurred_at_us": f["received_at_us"],
                 "actor_key_id": actor, "actor_role": role, "action": "proof_recorded", "subject": subject, "request_id": None,
                 "client_address": None, "user_agent": None,
                 "details_text": json.dumps(bound, sort_keys=True, separators=(",", ":")), "prev_hash": heads[chain][1]}
        event["hash"] = event_hash(event)
        heads[chain] = (event["seq"], event["hash"])
        writer.stdin.write("\t".join([str(event["seq"]), psql_time(event["occurred_at_us"]), copy_text(actor), copy_text(role),
                                      "proof_recorded", copy_text(subject), "\\N", "\\N", "\\N", copy_text(event["details_text"]),
                                      "\\\\x" + event["prev_hash"], "\\\\x" + event["hash"], str(chain), "2"]) + "\n")
        written += 1
    writer.stdin.close()
    if writer.wait() != 0:
        raise SystemExit("proof_events: COPY into audit_events failed")
    psql(url, "".join(f"UPDATE audit_chains SET head_seq = {seq}, head_hash = '\\x{head}'::bytea WHERE chain = {chain} AND head_seq < {seq};"
                      for chain, (seq, head) in heads.items()))
    return written


if __name__ == "__main__":
    # proof_events.py DATABASE_URL WHERE MODEL_SUBJECTS   (as scale.sh runs it after each growth step)
    print(f"appended {append_proof_events(*sys.argv[1:4])} proof_recorded events")
