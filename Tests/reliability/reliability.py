#!/usr/bin/env python3
"""Fault, soak and live-hostile-input runs against a real `countersign serve` process.

Used by scripts/reliability.sh; each subcommand prints one JSON line (prefixed `RESULT `) that the
script turns into the summary table, and exits 1 when its expectations fail.

  pg-restart  uploads under load while PostgreSQL is stopped for --outage seconds and started again:
              during the outage only 503 + Retry-After (never 500, never internals); recovery
              without restarting the service; every 201 is in the database byte for byte.
  kill9       uploads with Idempotency-Keys while the service is SIGKILLed and restarted; every
              upload is retried with its key until it has a final answer: exactly one proof per
              delivery, no partial proof, the audit chain verifies (API and `countersign verify`).
  soak        mixed load (deliveries, uploads, lists, metadata, PNG/SVG/points, audit) for
              --duration seconds; samples RSS, open file descriptors and database connections
              each 10 s: no errors, growth within the stated bounds.
  live        hostile input that only a real socket shows: slow clients (read timeouts), a
              sender that stops mid-body, oversized headers; the service stays healthy.

Everything uses only the standard library (http.client, threads, subprocess; psql for checks).
"""
import argparse, hashlib, http.client, json, math, os, random, re, signal, socket, subprocess, sys, threading, time

ROLES = ["courier", "dispatcher", "auditor", "admin"]


# MARK: plumbing

def log(*parts):
    print(time.strftime("%H:%M:%S"), *parts, file=sys.stderr, flush=True)


class Server:
    """A `countersign serve` child process on 127.0.0.1:port (stopped by main() even on errors)."""

    started = []

    def __init__(self, binary, database_url, port, log_path, extra_env=None):
        self.binary, self.database_url, self.port, self.log_path = binary, database_url, port, log_path
        self.extra_env = extra_env or {}
        self.process = None

    def env(self):
        env = dict(os.environ, DATABASE_URL=self.database_url, PORT=str(self.port), HOST="127.0.0.1",
                   LOG_LEVEL=os.environ.get("RELIABILITY_LOG_LEVEL", "warning"),
                   # The load here is one key's; the per-key rate limiter (tested on its own) would turn
                   # it into 429s. RELIABILITY_RATE_LIMIT puts it back.
                   RATE_LIMIT_PER_SECOND=os.environ.get("RELIABILITY_RATE_LIMIT", "0"),
                   # A development key (DATA_DIR, default ./.data): generation must be asked for.
                   CHECKPOINT_KEY_GENERATE="true", DATA_KEY_GENERATE="true")
        env.update(self.extra_env)
        return env

    def start(self, timeout=120):
        out = open(self.log_path, "ab")
        self.process = subprocess.Popen([self.binary, "serve"], env=self.env(), stdout=out, stderr=subprocess.STDOUT)
        Server.started.append(self)
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited with {self.process.returncode}; see {self.log_path}")
            try:
                status, _, _ = request(self.port, "GET", "/healthz", timeout=2)
                if status == 200:
                    return time.time()
            except OSError:
                pass
            time.sleep(0.2)
        raise RuntimeError("server did not become healthy")

    def kill9(self):
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def rss_kb(self):
        with open(f"/proc/{self.process.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def fds(self):
        return len(os.listdir(f"/proc/{self.process.pid}/fd"))

    def threads(self):
        return len(os.listdir(f"/proc/{self.process.pid}/task"))


def request(port, method, path, body=None, headers=None, timeout=30):
    """One request on a fresh connection: (status, headers dict lower-cased, body)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        data = response.read()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, data
    finally:
        connection.close()


def migrate(binary, owner_url):
    """`countersign migrate` as the owner; the server then runs as the runtime role of --database-url."""
    subprocess.run([binary, "migrate"], env=dict(os.environ, MIGRATION_DATABASE_URL=owner_url), capture_output=True, check=True)


def create_key(binary, database_url, role):
    out = subprocess.run([binary, "keys", "create", "--role", role, "--name", f"reliability {role}"],
                         env=dict(os.environ, DATABASE_URL=database_url), capture_output=True, text=True, check=True)
    match = re.search(r"cs_[A-Za-z0-9_-]{20,}", out.stdout + out.stderr)
    if not match:
        raise RuntimeError(f"no token in: {out.stdout} {out.stderr}")
    return match.group(0)


def psql(admin_url, sql):
    out = subprocess.run(["psql", admin_url, "-XAtq", "-v", "ON_ERROR_STOP=1", "-c", sql], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(out.stderr)
    return [line.split("|") for line in out.stdout.splitlines() if line]


def auth(token, extra=None):
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    headers.update(extra or {})
    return headers


def ink_body(seed):
    """A plausible proof body, different for each seed (no corpus needed)."""
    rnd = random.Random(seed)
    strokes = []
    t = 0
    for s in range(rnd.randint(2, 4)):
        points = []
        x0, y0 = 40 + s * 150 + rnd.random() * 20, 80 + rnd.random() * 40
        for i in range(rnd.randint(30, 80)):
            points.append([round(x0 + i * 1.8, 3), round(y0 + 40 * math.sin(i / 6 + seed), 3), t])
            t += 8 + rnd.randint(0, 6)
        t += 200
        strokes.append(points)
    doc = {"signer": {"name": f"Signer {seed}"}, "captured_at": "2025-03-01T14:05:09.250+01:00",
           "location": {"lat": 52.5201, "lon": 13.4051, "accuracy_m": 8},
           "device": {"id": "reliability", "model": "x", "os": "linux", "app": "reliability.py"},
           "ink": {"canvas": {"width": 600, "height": 200}, "strokes": strokes}}
    return json.dumps(doc, separators=(",", ":")).encode()


def create_deliveries(port, token, prefix, count):
    for i in range(count):
        body = json.dumps({"reference": f"{prefix}{i}", "recipient": {"name": "Reliability"}, "address": "1 Main St",
                           "destination": {"lat": 52.52, "lon": 13.405}}).encode()
        status, _, data = request(port, "POST", "/v1/deliveries", body, auth(token))
        if status not in (200, 201):
            raise RuntimeError(f"delivery {prefix}{i}: {status} {data[:200]}")


def status_label(status, data):
    """`409 idempotency_key_in_flight` for problems, the bare status otherwise."""
    if status < 400:
        return str(status)
    try:
        return f"{status} {json.loads(data).get('code')}"
    except ValueError:
        return str(status)


INTERNALS = re.compile(rb"(?i)postgres|libpq|connection refused|sqlstate|socket|fatal:|\.swift|stack")


# MARK: pg-restart

def pg_restart(args):
    token = create_key(args.binary, args.database_url, "courier")
    dispatcher = create_key(args.binary, args.database_url, "dispatcher")
    server = Server(args.binary, args.database_url, args.port, args.server_log)
    server.start()
    prefix = f"PGR{int(time.time())}-"
    count = args.deliveries
    create_deliveries(args.port, dispatcher, prefix, count)
    acknowledged = {}       # reference -> (proof_id, sha256 of the bytes sent)
    statuses = {}
    bad = []                # (what, status, snippet)
    outage = {"start": None, "end": None}
    first_success_after = [None]
    ambiguous = []
    lock = threading.Lock()
    next_index = [0]
    stop = threading.Event()

    def worker():
        while not stop.is_set():
            with lock:
                # With --stop-after-outage, no new upload starts that long after the outage ended, so a
                # fast machine cannot finish every upload before the outage (which would test nothing).
                if (args.stop_after_outage is not None and outage["end"]
                        and time.time() > outage["end"] + args.stop_after_outage):
                    return
                i = next_index[0]
                next_index[0] += 1
            if i >= count:
                return
            reference = f"{prefix}{i}"
            body = ink_body(i)
            # Retry the same upload until it has a final answer (201 or a 409 that says it is stored).
            while not stop.is_set():
                sent_at = time.time()
                try:
                    extra = {"Idempotency-Key": f"k-{reference}"} if args.idempotency else {}
                    status, headers, data = request(args.port, "POST", f"/v1/deliveries/{reference}/proof", body,
                                                    auth(token, extra), timeout=30)
                except OSError as error:
                    with lock:
                        statuses["conn_error"] = statuses.get("conn_error", 0) + 1
                    time.sleep(0.2)
                    continue
                with lock:
                    label = status_label(status, data)
                    statuses[label] = statuses.get(label, 0) + 1
                    if status >= 500:
                        if status != 503:
                            bad.append(("non-503 server error", status, data[:300].decode("utf-8", "replace")))
                        elif "retry-after" not in headers:
                            bad.append(("503 without Retry-After", status, data[:300].decode("utf-8", "replace")))
                        if INTERNALS.search(data):
                            bad.append(("internals in a 5xx body", status, data[:300].decode("utf-8", "replace")))
                    if status == 201 and outage["end"] and sent_at >= outage["end"] and first_success_after[0] is None:
                        first_success_after[0] = time.time()
                if status == 201:
                    reply = json.loads(data)
                    with lock:
                        acknowledged[reference] = (reply["proof_id"], hashlib.sha256(body).hexdigest())
                    break
                if status == 409 and b"proof_already_recorded" in data:
                    # Only possible if an earlier attempt was stored although its answer was lost or an error.
                    with lock:
                        ambiguous.append(reference)
                    break
                if status in (503, 409):
                    time.sleep(min(float(headers.get("retry-after", "1")), 2.0))
                    continue
                bad.append(("unexpected", status, data[:300].decode("utf-8", "replace")))
                break

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(args.connections)]
    started = time.time()
    for thread in threads:
        thread.start()
    time.sleep(args.warmup)
    log("pg-restart: stopping PostgreSQL")
    outage["start"] = time.time()
    subprocess.run(args.pg_stop, shell=True, check=True, stdout=subprocess.DEVNULL)
    time.sleep(args.outage)
    subprocess.run(args.pg_start, shell=True, check=True, stdout=subprocess.DEVNULL)
    outage["end"] = time.time()
    log("pg-restart: PostgreSQL started again")
    deadline = time.time() + args.timeout
    for thread in threads:
        thread.join(max(1, deadline - time.time()))
    stop.set()
    for thread in threads:
        thread.join()
    elapsed = time.time() - started
    recovery = (first_success_after[0] - outage["end"]) if first_success_after[0] else None
    healthy_after = request(args.port, "GET", "/readyz")[0] == 200
    server.stop()

    stored = {row[0]: (row[1], row[2]) for row in psql(args.admin_url,
              # The body is stored sealed (0025): its clear digest is the column; verify --database re-derives it.
              "SELECT d.reference, p.id, encode(p.body_sha256, 'hex') FROM proofs p JOIN deliveries d ON d.id = p.delivery_id"
              f" WHERE d.reference LIKE '{prefix}%'")}
    missing = [r for r, (pid, sha) in acknowledged.items() if r not in stored or stored[r][0] != pid]
    mismatched = [r for r, (pid, sha) in acknowledged.items() if r in stored and stored[r][1] != sha]
    taken = min(next_index[0], count)
    result = {"run": args.label or ("pg-restart" + (" +idempotency" if args.idempotency else "")), "uploads": taken, "acknowledged": len(acknowledged), "stored": len(stored),
              "missing": len(missing), "mismatched": len(mismatched), "statuses": {str(k): v for k, v in statuses.items()},
              "bad": len(bad), "bad_examples": bad[:5], "outage_s": args.outage,
              "recovery_s": None if recovery is None else round(recovery, 2), "seconds": round(elapsed, 1),
              "ambiguous": len(ambiguous), "idempotency": args.idempotency, "served_503": sum(v for k, v in statuses.items() if k.startswith("503")), "healthy_after": healthy_after}
    ok = (not bad and not missing and not mismatched and len(acknowledged) + len(ambiguous) == taken
          and recovery is not None and healthy_after)
    result["ok"] = ok
    print("RESULT " + json.dumps(result), flush=True)
    return 0 if ok else 1


# MARK: kill9

def kill9(args):
    token = create_key(args.binary, args.database_url, "courier")
    dispatcher = create_key(args.binary, args.database_url, "dispatcher")
    auditor = create_key(args.binary, args.database_url, "auditor")
    server = Server(args.binary, args.database_url, args.port, args.server_log)
    server.start()
    prefix = f"K9{int(time.time())}-"
    count = args.deliveries
    create_deliveries(args.port, dispatcher, prefix, count)
    lock = threading.Lock()
    next_index = [0]
    outcomes = {}           # reference -> final status
    statuses = {}
    bad = []
    replayed = [0]
    stop = threading.Event()

    def worker():
        while not stop.is_set():
            with lock:
                i = next_index[0]
                next_index[0] += 1
            if i >= count:
                return
            reference = f"{prefix}{i}"
            body = ink_body(10_000 + i)
            key = f"kill9-{reference}"
            attempts = 0
            while not stop.is_set():
                attempts += 1
                try:
                    status, headers, data = request(args.port, "POST", f"/v1/deliveries/{reference}/proof", body,
                                                    auth(token, {"Idempotency-Key": key}), timeout=30)
                except OSError:
                    with lock:
                        statuses["conn_error"] = statuses.get("conn_error", 0) + 1
                    time.sleep(0.3)
                    continue
                with lock:
                    label = status_label(status, data)
                    statuses[label] = statuses.get(label, 0) + 1
                if status == 201:
                    if headers.get("idempotent-replayed") == "true":
                        with lock:
                            replayed[0] += 1
                    with lock:
                        outcomes[reference] = 201
                    break
                if status == 409 and b"idempotency_key_in_flight" in data:
                    # A claim left by the killed process: taken over after the documented 60 s.
                    time.sleep(min(float(headers.get("retry-after", "1")), 5.0))
                    continue
                if status == 503:
                    time.sleep(1)
                    continue
                with lock:
                    outcomes[reference] = status
                    bad.append((reference, status, data[:300].decode("utf-8", "replace")))
                break

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(args.connections)]
    for thread in threads:
        thread.start()
    kills = 0
    restart_seconds = []
    # Kill k of n when k/(n+1) of the uploads have their final answer, so every kill lands while
    # uploads are in flight however fast the machine is (a fixed interval let a fast machine
    # finish all uploads before the first kill).
    for k in range(1, args.kills + 1):
        target = count * k // (args.kills + 1)
        while len(outcomes) < target and any(t.is_alive() for t in threads):
            time.sleep(0.005)
        if all(not t.is_alive() for t in threads):
            break
        log(f"kill9: SIGKILL after {len(outcomes)} of {count} uploads")
        server.kill9()
        kills += 1
        begin = time.time()
        server.start()
        restart_seconds.append(time.time() - begin)
    deadline = time.time() + args.timeout
    for thread in threads:
        thread.join(max(1, deadline - time.time()))
    stop.set()
    for thread in threads:
        thread.join()
    status, _, data = request(args.port, "GET", "/v1/audit/verify", headers=auth(auditor), timeout=120)
    audit = json.loads(data) if status == 200 else {"status": f"http {status}"}
    # `verify --database` checks the stored checkpoints against a pinned key: the server's.
    status, _, data = request(args.port, "GET", "/v1/audit/checkpoint", headers=auth(auditor), timeout=60)
    public_key = json.loads(data)["public_key"] if status == 200 else "0" * 64
    server.stop()
    # The server's development data keys (DATA_DIR/data-keys) open the sealed proofs.
    verify = subprocess.run([args.binary, "verify", "--database", "--database-url", args.database_url, "--public-key", public_key],
                            capture_output=True, text=True, env=dict(os.environ, DATA_KEY_GENERATE="true"))

    rows = psql(args.admin_url,
                "SELECT d.reference, count(p.id), bool_and(d.status = 'delivered'), "
                "bool_and(p.png_sha256 IS NOT NULL AND length(p.png) > 0 AND length(p.body) > 0) "
                "FROM deliveries d LEFT JOIN proofs p ON p.delivery_id = d.id "
                f"WHERE d.reference LIKE '{prefix}%' GROUP BY d.reference")
    per_delivery = {r[0]: int(r[1]) for r in rows}
    not_one = [r for r, n in per_delivery.items() if n != 1]
    partial = [r[0] for r in rows if int(r[1]) > 0 and (r[2] != "t" or r[3] != "t")]
    in_flight = psql(args.admin_url, "SELECT count(*) FROM idempotency_records WHERE state = 'in_flight'")[0][0]
    result = {"run": "kill9", "uploads": count, "kills": kills, "final_201": sum(1 for s in outcomes.values() if s == 201),
              "replayed": replayed[0], "proofs_not_exactly_one": len(not_one), "partial": len(partial),
              "in_flight_left": int(in_flight), "audit_verify": audit.get("status"), "cli_verify_exit": verify.returncode,
              "statuses": {str(k): v for k, v in statuses.items()}, "bad": len(bad), "bad_examples": bad[:5],
              "restart_s": [round(s, 2) for s in restart_seconds]}
    ok = (not bad and not not_one and not partial and audit.get("status") == "ok" and verify.returncode == 0
          and len(outcomes) == count and kills == args.kills)
    result["ok"] = ok
    print("RESULT " + json.dumps(result), flush=True)
    return 0 if ok else 1


# MARK: soak

def soak(args):
    tokens = {role: create_key(args.binary, args.database_url, role) for role in ROLES}
    server = Server(args.binary, args.database_url, args.port, args.server_log)
    server.start()
    prefix = f"SOAK{int(time.time())}-"
    lock = threading.Lock()
    counter = [0]
    statuses = {}
    errors = []
    delivered = []
    stop = threading.Event()
    latencies = []

    def next_id():
        with lock:
            counter[0] += 1
            return counter[0]

    def record(name, status, data, expected):
        with lock:
            statuses[status] = statuses.get(status, 0) + 1
            if status not in expected:
                errors.append((name, status, data[:200].decode("utf-8", "replace")))

    def worker(seed):
        rnd = random.Random(seed)
        connection = http.client.HTTPConnection("127.0.0.1", args.port, timeout=60)

        def call(method, path, body=None, role="admin", extra=None):
            nonlocal connection
            begin = time.time()
            try:
                connection.request(method, path, body=body, headers=auth(tokens[role], extra))
                response = connection.getresponse()
                data = response.read()
            except (OSError, http.client.HTTPException):
                connection.close()
                connection = http.client.HTTPConnection("127.0.0.1", args.port, timeout=60)
                return -1, b"connection error"
            with lock:
                latencies.append(time.time() - begin)
            return response.status, data

        while not stop.is_set():
            action = rnd.random()
            if action < 0.25 or not delivered:
                i = next_id()
                reference = f"{prefix}{i}"
                body = json.dumps({"reference": reference, "recipient": {"name": "Soak"}, "address": "1 Main St",
                                   "destination": {"lat": 52.52, "lon": 13.405}}).encode()
                status, data = call("POST", "/v1/deliveries", body, "dispatcher")
                record("create", status, data, {201})
                status, data = call("POST", f"/v1/deliveries/{reference}/proof", ink_body(i), "courier",
                                    {"Idempotency-Key": f"soak-{reference}"})
                record("upload", status, data, {201})
                if status == 201:
                    with lock:
                        delivered.append(reference)
            elif action < 0.45:
                status, data = call("GET", "/v1/deliveries?limit=20", role="courier")
                record("list", status, data, {200})
            elif action < 0.6:
                reference = rnd.choice(delivered)
                status, data = call("GET", f"/v1/deliveries/{reference}/proof", role="dispatcher")
                record("metadata", status, data, {200})
            elif action < 0.75:
                reference = rnd.choice(delivered)
                status, data = call("GET", f"/v1/deliveries/{reference}/proof/signature.png", role="auditor")
                record("png", status, data, {200})
            elif action < 0.8:
                reference = rnd.choice(delivered)
                status, data = call("GET", f"/v1/deliveries/{reference}/proof/signature.png?width={rnd.randint(50, 800)}",
                                    role="auditor")
                record("png resize", status, data, {200})
            elif action < 0.87:
                reference = rnd.choice(delivered)
                status, data = call("GET", f"/v1/deliveries/{reference}/proof/signature.svg", role="admin")
                record("svg", status, data, {200})
            elif action < 0.93:
                reference = rnd.choice(delivered)
                status, data = call("GET", f"/v1/deliveries/{reference}/proof/points", role="admin")
                record("points", status, data, {200})
            elif action < 0.98:
                status, data = call("GET", "/v1/audit/events?limit=50", role="auditor")
                record("audit", status, data, {200})
            else:
                # A refused request now and then (must stay 4xx).
                status, data = call("POST", "/v1/deliveries", b"{", "dispatcher")
                record("bad json", status, data, {400})
        connection.close()

    def database_connections():
        return int(psql(args.admin_url, "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                                        "AND pid <> pg_backend_pid()")[0][0])

    def allocator_mb():
        # The server's countersign_malloc_bytes gauges (glibc): RSS growth with flat in_use is memory
        # the allocator keeps (a new thread's arena), not a leak. {} when /metrics has no such series.
        try:
            connection = http.client.HTTPConnection("127.0.0.1", args.port, timeout=10)
            connection.request("GET", "/metrics")
            text = connection.getresponse().read().decode("utf-8", "replace")
            connection.close()
        except (OSError, http.client.HTTPException):
            return {}
        found = {}
        for line in text.splitlines():
            match = re.match(r'countersign_malloc_bytes\{state="(\w+)"\} (\S+)$', line)
            if match:
                found[f"malloc_{match.group(1)}_mb"] = round(float(match.group(2)) / 1048576, 1)
        return found

    threads = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(args.connections)]
    started = time.time()
    for thread in threads:
        thread.start()
    samples = []
    while time.time() - started < args.duration:
        time.sleep(min(10, max(0.1, args.duration - (time.time() - started))))
        samples.append({"t": round(time.time() - started), "rss_mb": round(server.rss_kb() / 1024, 1), "fds": server.fds(),
                        "threads": server.threads(), "db_connections": database_connections(), "requests": len(latencies),
                        **allocator_mb()})
        log("soak:", json.dumps(samples[-1]))
    stop.set()
    for thread in threads:
        thread.join()
    elapsed = time.time() - started
    server.stop()
    # Growth: after the first minute (pools, caches and allocator arenas warm up), RSS may grow by at
    # most --rss-growth-mb and file descriptors / database connections stay within fixed ceilings.
    warm = [s for s in samples if s["t"] >= min(60, args.duration / 3)] or samples
    rss_growth = warm[-1]["rss_mb"] - warm[0]["rss_mb"] if warm else 0
    max_fds = max(s["fds"] for s in samples)
    max_db = max(s["db_connections"] for s in samples)
    latencies.sort()
    n = len(latencies)
    result = {"run": "soak", "seconds": round(elapsed), "requests": n, "rate": round(n / elapsed, 1),
              "p99_ms": round(latencies[int(0.99 * (n - 1))] * 1000, 1) if n else None,
              "errors": len(errors), "error_examples": errors[:5], "statuses": {str(k): v for k, v in statuses.items()},
              "rss_mb_first": samples[0]["rss_mb"], "rss_mb_warm": warm[0]["rss_mb"], "rss_mb_last": samples[-1]["rss_mb"],
              "rss_mb_max": max(s["rss_mb"] for s in samples), "rss_growth_mb": round(rss_growth, 1),
              "max_fds": max_fds, "max_db_connections": max_db, "bounds": {"rss_growth_mb": args.rss_growth_mb,
              "fds": args.max_fds, "db_connections": args.max_db_connections}, "samples": samples}
    ok = (not errors and rss_growth <= args.rss_growth_mb and max_fds <= args.max_fds
          and max_db <= args.max_db_connections)
    result["ok"] = ok
    print("RESULT " + json.dumps(result), flush=True)
    return 0 if ok else 1


# MARK: live hostile input

def raw_exchange(port, data, timeout):
    """Sends raw bytes; returns (first status line, closed_by_server, seconds)."""
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(1)
    begin = time.time()
    try:
        s.sendall(data)
    except OSError:
        pass
    received = b""
    closed = False
    while time.time() - begin < timeout:
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            continue
        except OSError:
            closed = True
            break
        if not chunk:
            closed = True
            break
        received += chunk
    s.close()
    return received.split(b"\r\n", 1)[0].decode("latin-1"), closed, round(time.time() - begin, 1)


def slow_clients(args, token, check):
    line, closed, seconds = raw_exchange(args.port, b"GET /healthz HTTP/1.1\r\nHost: x\r\n", args.slow_timeout)
    check("slow client: unfinished head", closed, f"closed={closed} after {seconds}s {line}")
    line, closed, seconds = raw_exchange(args.port, b"POST /v1/deliveries HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                                         + token.encode() + b"\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{",
                                         args.slow_timeout)
    check("slow client: unfinished body", closed, f"closed={closed} after {seconds}s {line}")


def live(args):
    token = create_key(args.binary, args.database_url, "admin")
    server = Server(args.binary, args.database_url, args.port, args.server_log)
    server.start()
    checks = []

    def check(name, ok, detail):
        checks.append({"case": name, "ok": bool(ok), "detail": detail})
        log("live:", name, "ok" if ok else "FAIL", detail)

    # Slow clients: a head that never ends, a body that never arrives. The server must drop them.
    if not args.skip_slow:
        slow_clients(args, token, check)
    # Many idle connections at once must not stop others from being served.
    idle = []
    for _ in range(args.idle_connections):
        s = socket.create_connection(("127.0.0.1", args.port))
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        idle.append(s)
    begin = time.time()
    status = request(args.port, "GET", "/healthz", timeout=10)[0]
    check(f"{args.idle_connections} idle half-open connections", status == 200, f"healthz {status} in {time.time() - begin:.2f}s")
    for s in idle:
        s.close()
    line, _, _ = raw_exchange(args.port, b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 200_000 + b"\r\n\r\n", 5)
    check("200 KB header", line.startswith("HTTP/1.1 4"), line)
    status = request(args.port, "GET", "/readyz", timeout=10)[0]
    check("healthy afterwards", status == 200, f"readyz {status}")
    server.stop()
    failed = [c for c in checks if not c["ok"]]
    print("RESULT " + json.dumps({"run": "live", "cases": len(checks), "failures": len(failed), "checks": checks,
                                  "ok": not failed}), flush=True)
    return 0 if not failed else 1


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    for name in ["pg-restart", "kill9", "soak", "live"]:
        s = sub.add_parser(name)
        s.add_argument("--binary", required=True)
        s.add_argument("--database-url", required=True)
        s.add_argument("--owner-url", default=None, help="the owner's URL for `migrate` (default: --database-url)")
        s.add_argument("--admin-url", required=True)
        s.add_argument("--port", type=int, required=True)
        s.add_argument("--server-log", default="/dev/null")
        s.add_argument("--connections", type=int, default=8)
        s.add_argument("--deliveries", type=int, default=300)
        s.add_argument("--timeout", type=float, default=180, help="for the uploads to finish after the fault")
        if name == "pg-restart":
            s.add_argument("--pg-stop", required=True)
            s.add_argument("--pg-start", required=True)
            s.add_argument("--warmup", type=float, default=2)
            s.add_argument("--outage", type=float, default=5)
            s.add_argument("--idempotency", action="store_true", help="send an Idempotency-Key with each upload")
            s.add_argument("--label", default=None, help="the part's name in the summary (e.g. pg-crash)")
            s.add_argument("--stop-after-outage", type=float, default=None,
                           help="start no new upload this many seconds after the outage ended (short runs)")
        if name == "kill9":
            s.add_argument("--kills", type=int, default=2, help="spread evenly over the uploads' progress")
        if name == "soak":
            s.add_argument("--duration", type=float, default=1800)
            s.add_argument("--rss-growth-mb", type=float, default=64)
            s.add_argument("--max-fds", type=int, default=256)
            s.add_argument("--max-db-connections", type=int, default=12)
        if name == "live":
            s.add_argument("--slow-timeout", type=float, default=75)
            s.add_argument("--idle-connections", type=int, default=200)
            s.add_argument("--skip-slow", action="store_true", help="leave out the slow-client cases (short form)")
    args = p.parse_args()
    migrate(args.binary, args.owner_url or args.database_url)
    handler = {"pg-restart": pg_restart, "kill9": kill9, "soak": soak, "live": live}[args.command]
    try:
        code = handler(args)
    except Exception as error:  # a broken run must still end its server; load threads are daemons
        print("RESULT " + json.dumps({"run": args.command, "ok": False, "error": repr(error)[:300]}), flush=True)
        code = 1
    finally:
        for server in Server.started:
            server.stop()
    sys.exit(code)


if __name__ == "__main__":
    main()
