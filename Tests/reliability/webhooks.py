#!/usr/bin/env python3
"""Webhooks end to end: a real `countersign serve` posting to real receivers on 127.0.0.1.

Every post is verified with the Standard Webhooks reference library (`standardwebhooks`, from
PyPI; scripts/webhooks-check.sh installs it into a venv). Prints one `RESULT {json}` line and exits 1
when an expectation fails. Traffic goes only to loopback addresses.

  verify  register an endpoint, create deliveries and upload proofs, send a test event, rotate the
          secret: every event arrives, its signature verifies with the reference library (after the
          rotation: with the new secret and with the old one), the payloads carry links, digests and
          a per-delivery sequence.
  faults  the receiver down, answering 500, answering 429 with Retry-After, hanging past the
          timeout; the service SIGKILLed and restarted; PostgreSQL restarted — while deliveries
          are created and proofs uploaded. Then: every committed change's event arrives, none for a
          change that was refused (and so rolled back), and duplicates only ever repeat a webhook-id.
"""
import argparse, base64, json, os, subprocess, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reliability import Server, auth, create_key, ink_body, log, psql, request  # noqa: E402

from standardwebhooks.webhooks import Webhook  # noqa: E402


class Receiver:
    """An HTTP receiver on 127.0.0.1 whose behaviour the run switches: ok, fail (500), throttle (429 +
    Retry-After), hang (sleeps past the sender's timeout) or down (its socket closed)."""

    def __init__(self, port):
        self.port, self.mode, self.lock = port, "ok", threading.Lock()
        self.received = []   # (webhook-id, payload dict, headers) of every post answered 2xx
        self.posts = 0       # every post, whatever the answer
        self.secrets = []    # any of these must verify each post
        self.bad_signatures = []
        self.server = None

    def start(self):
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                headers = {k.lower(): v for k, v in self.headers.items()}
                with receiver.lock:
                    receiver.posts += 1
                    mode, secrets = receiver.mode, list(receiver.secrets)
                if mode == "hang":
                    time.sleep(4)
                    return
                if mode in ("fail", "throttle"):
                    self.send_response(500 if mode == "fail" else 429)
                    if mode == "throttle":
                        self.send_header("Retry-After", "1")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                verified = []
                for secret in secrets:
                    try:
                        verified.append(Webhook(secret).verify(body, headers))
                    except Exception as error:  # noqa: BLE001 - the library raises its own types
                        verified.append(error)
                if secrets and not any(isinstance(v, dict) for v in verified):
                    with receiver.lock:
                        receiver.bad_signatures.append((headers.get("webhook-id"), [str(v) for v in verified]))
                    self.send_response(400)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                with receiver.lock:
                    receiver.received.append((headers["webhook-id"], json.loads(body), headers))
                self.send_response(204)
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        if self.server:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    def events(self):
        with self.lock:
            return list(self.received)


def admin_call(port, token, method, path, body=None):
    status, _, data = request(port, method, path, json.dumps(body).encode() if body is not None else None, auth(token))
    return status, (json.loads(data) if data else {})


def wait_for(condition, timeout, what):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if condition():
            return True
        time.sleep(0.2)
    log(f"timed out waiting for {what}")
    return False


def server_env(extra=None):
    env = {"WEBHOOK_SECRETS_KEY": base64.b64encode(os.urandom(32)).decode(), "WEBHOOK_ALLOW_PRIVATE_NETWORKS": "true",
           "WEBHOOK_TIMEOUT_SECONDS": "2", "WEBHOOK_RETRY_BASE_MILLISECONDS": "200", "WEBHOOK_RETRY_MAX_SECONDS": "2",
           "WEBHOOK_POLL_SECONDS": "1"}
    env.update(extra or {})
    return env


def register(args, admin, receiver_port, events):
    status, created = admin_call(args.port, admin, "POST", "/v1/webhooks",
                                 {"url": f"http://127.0.0.1:{receiver_port}/hook", "events": events, "description": "webhooks.py"})
    if status != 201:
        raise RuntimeError(f"register: {status} {created}")
    return created


def create_delivery(args, token, reference):
    body = json.dumps({"reference": reference, "recipient": {"name": "Webhook"}, "address": "1 Main St",
                       "destination": {"lat": 52.52, "lon": 13.405}}).encode()
    return request(args.port, "POST", "/v1/deliveries", body, auth(token), timeout=10)[0]


def upload(args, token, reference, seed):
    return request(args.port, "POST", f"/v1/deliveries/{reference}/proof", ink_body(seed), auth(token), timeout=20)[0]


# MARK: verify

def verify(args):
    receiver = Receiver(args.receiver_port)
    receiver.start()
    server = Server(args.binary, args.database_url, args.port, args.server_log, server_env())
    checks = {}
    try:
        server.start()
        admin, dispatcher, courier = (create_key(args.binary, args.database_url, r) for r in ("admin", "dispatcher", "courier"))
        created = register(args, admin, args.receiver_port, ["delivery.created", "delivery.delivered"])
        receiver.secrets = [created["secret"]]
        references = [f"WV-{i}" for i in range(args.deliveries)]
        for index, reference in enumerate(references):
            assert create_delivery(args, dispatcher, reference) == 201
            assert upload(args, courier, reference, index) == 201
        admin_call(args.port, admin, "POST", f"/v1/webhooks/{created['id']}/test")
        expected = 2 * len(references) + 1
        checks["all_arrived"] = wait_for(lambda: len({e[0] for e in receiver.events()}) >= expected, 60, "every event")
        # Rotation: the next posts carry both signatures; a receiver holding only the old secret, or
        # only the new one, accepts them.
        status, rotated = admin_call(args.port, admin, "POST", f"/v1/webhooks/{created['id']}/rotate-secret")
        checks["rotated"] = status == 200 and rotated["secret"] != created["secret"]
        for secrets in ([created["secret"]], [rotated["secret"]]):
            receiver.secrets = secrets
            before = len(receiver.events())
            admin_call(args.port, admin, "POST", f"/v1/webhooks/{created['id']}/test")
            checks[f"verifies_with_{'old' if secrets[0] == created['secret'] else 'new'}_secret"] = wait_for(
                lambda: len(receiver.events()) > before, 30, "the test event after rotation")
        events = receiver.events()
        by_type = {}
        for webhook_id, payload, headers in events:
            by_type.setdefault(payload["type"], []).append(payload)
            checks.setdefault("signature_header_has_two_after_rotation", False)
            if len(headers["webhook-signature"].split(" ")) == 2:
                checks["signature_header_has_two_after_rotation"] = True
        delivered = by_type.get("delivery.delivered", [])
        checks["delivered_payloads"] = len(delivered) == len(references) and all(
            p["data"]["links"]["png"].endswith("/proof/signature.png") and len(p["data"]["digests"]["png_sha256"]) == 64
            for p in delivered)
        sequences = {}
        for payload in by_type.get("delivery.created", []) + delivered:
            sequences.setdefault(payload["data"]["reference"], {})[payload["type"]] = payload["data"]["sequence"]
        checks["sequence_orders_each_delivery"] = all(s["delivery.created"] < s["delivery.delivered"] for s in sequences.values())
        checks["no_bad_signatures"] = not receiver.bad_signatures
        status, listing = admin_call(args.port, admin, "GET", f"/v1/webhooks/{created['id']}/deliveries?limit=200")
        checks["attempts_listed"] = status == 200 and all(
            d["attempts"] and d["attempts"][-1]["status_code"] == 204 for d in listing["items"] if d["state"] == "succeeded")
    finally:
        server.stop()
        receiver.stop()
    ok = all(checks.values())
    print("RESULT " + json.dumps({"run": "webhooks verify", "ok": ok, "events": len(receiver.events()), "checks": checks}))
    return 0 if ok else 1


# MARK: faults

def faults(args):
    receiver = Receiver(args.receiver_port)
    receiver.start()
    env = server_env()
    server = Server(args.binary, args.database_url, args.port, args.server_log, env)
    checks, refused = {}, 0
    try:
        server.start()
        admin, dispatcher, courier = (create_key(args.binary, args.database_url, r) for r in ("admin", "dispatcher", "courier"))
        created = register(args, admin, args.receiver_port, ["delivery.created", "delivery.delivered"])
        receiver.secrets = [created["secret"]]
        counter = [0]

        def traffic(seconds):
            """Creates deliveries and uploads two different proofs to each at once: one commits, the other
            is refused (409; when both got past the early check, its transaction rolls back)."""
            nonlocal refused
            deadline = time.time() + seconds
            while time.time() < deadline:
                counter[0] += 1
                reference = f"WF-{counter[0]}"
                try:
                    if create_delivery(args, dispatcher, reference) not in (200, 201):
                        continue
                    answers = []

                    def race(seed, reference=reference):
                        try:
                            answers.append(upload(args, courier, reference, seed))
                        except OSError:
                            pass
                    racers = [threading.Thread(target=race, args=(seed,)) for seed in (counter[0], counter[0] + 100000)]
                    for racer in racers:
                        racer.start()
                    for racer in racers:
                        racer.join()
                    refused += answers.count(409)
                except OSError:
                    time.sleep(0.2)  # the service is restarting: its outcome is judged from the database

        phases = [("ok", None), ("down", None), ("fail", None), ("throttle", None), ("hang", None),
                  ("ok", "restart-service"), ("ok", "restart-postgres")]
        for mode, fault in phases:
            log(f"webhooks faults: receiver {mode}{', ' + fault if fault else ''}")
            if mode == "down":
                receiver.stop()
            elif receiver.server is None:
                receiver.start()
            receiver.mode = "ok" if mode == "down" else mode
            if fault == "restart-service":
                server.kill9()
                server.start()
            if fault == "restart-postgres":
                subprocess.run(args.pg_restart, shell=True, check=True, capture_output=True)
            traffic(args.phase_seconds)
        if receiver.server is None:
            receiver.start()
        receiver.mode = "ok"
        expected_created = {r for (r,) in psql(args.admin_url, "SELECT reference FROM deliveries")}
        expected_delivered = {r for (r,) in psql(args.admin_url, "SELECT reference FROM deliveries WHERE status = 'delivered'")}

        def arrived():
            seen = {(p["type"], p["data"]["reference"]) for _, p, _ in receiver.events()}
            return ({("delivery.created", r) for r in expected_created} <= seen
                    and {("delivery.delivered", r) for r in expected_delivered} <= seen)
        drain_started = time.time()
        checks["every_committed_event_arrived"] = wait_for(arrived, args.timeout, "every committed change's event")
        drain_seconds = round(time.time() - drain_started, 1)
        missing = len(expected_created) + len(expected_delivered) - sum(
            1 for kind, r in {(p["type"], p["data"]["reference"]) for _, p, _ in receiver.events()}
            if (kind == "delivery.created" and r in expected_created) or (kind == "delivery.delivered" and r in expected_delivered))
        log(f"webhooks faults: {len(expected_created)} created, {len(expected_delivered)} delivered; "
            f"{missing} events missing after {drain_seconds} s of draining")
        events = receiver.events()
        per_change = {}
        for webhook_id, payload, _ in events:
            per_change.setdefault((payload["type"], payload["data"]["reference"]), set()).add(webhook_id)
        checks["duplicates_share_a_webhook_id"] = all(len(ids) == 1 for ids in per_change.values())
        delivered_events = [k for k in per_change if k[0] == "delivery.delivered"]
        checks["no_event_for_refused_changes"] = refused > 0 and len(delivered_events) == len(expected_delivered)
        checks["no_event_for_uncommitted_deliveries"] = {r for (t, r) in per_change if t == "delivery.created"} <= expected_created
        checks["no_bad_signatures"] = not receiver.bad_signatures
        attempts = psql(args.admin_url, "SELECT count(*), count(*) FILTER (WHERE status_code = 429), "
                                        "count(*) FILTER (WHERE status_code = 500), count(*) FILTER (WHERE status_code IS NULL) "
                                        "FROM webhook_attempts")[0]
        checks["faults_were_seen"] = int(attempts[1]) > 0 and int(attempts[2]) > 0 and int(attempts[3]) > 0
        duplicates = len(events) - len(per_change)
    finally:
        server.stop()
        receiver.stop()
    ok = all(checks.values())
    print("RESULT " + json.dumps({"run": "webhooks faults", "ok": ok, "changes": len(per_change) if 'per_change' in dir() else 0,
                                  "refused_changes": refused, "posts": receiver.posts,
                                  "drain_s": drain_seconds if 'drain_seconds' in dir() else None,
                                  "missing": missing if 'missing' in dir() else None,
                                  "duplicates": duplicates if 'duplicates' in dir() else None,
                                  "attempts": attempts if 'attempts' in dir() else None, "checks": checks}))
    return 0 if ok else 1


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    for name in ("verify", "faults"):
        s = sub.add_parser(name)
        s.add_argument("--binary", required=True)
        s.add_argument("--database-url", required=True)
        s.add_argument("--admin-url", required=True)
        s.add_argument("--port", type=int, required=True)
        s.add_argument("--receiver-port", type=int, required=True)
        s.add_argument("--server-log", default="/dev/null")
        s.add_argument("--deliveries", type=int, default=5)
        if name == "faults":
            s.add_argument("--pg-restart", required=True, help="shell command that restarts PostgreSQL")
            s.add_argument("--phase-seconds", type=float, default=3)
            s.add_argument("--timeout", type=float, default=120, help="for every event to arrive after the faults")
    args = p.parse_args()
    try:
        return verify(args) if args.command == "verify" else faults(args)
    finally:
        for server in Server.started:
            server.stop()


if __name__ == "__main__":
    sys.exit(main())
