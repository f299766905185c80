#!/usr/bin/env python3
"""Hostile-load driver (issue 20): legitimate uploads while attackers do their worst, on loopback.

One run = DURATION seconds of
  - legitimate load: LEGIT threads, each uploading proofs (real-sized ink) to its own deliveries
    with keep-alive, round-robin over the legitimate API keys;
  - /healthz probed every 100 ms on a connection of its own;
  - with --attack: two attacker keys, each at its rate limit (RATE per second) alternating the
    heaviest valid upload (the most points the limits allow) and a maximal resize of a stored heavy
    proof; and one client dripping request bodies (DRIP connections, one byte every 5 s).
Prints one JSON line: legitimate uploads/s, p50/p99 latency and errors; /healthz p50/p99/max;
what the attackers got back. Bounded in time; loopback only.
"""
import argparse, http.client, json, random, socket, statistics, sys, threading, time


def ink(points, seed):
    rnd = random.Random(seed)
    strokes, t, left = [], 0, points
    while left > 0:
        n = min(400, left)
        left -= n
        stroke = []
        x, y = rnd.uniform(50, 550), rnd.uniform(50, 350)
        for _ in range(n):
            t += 8
            x = min(590, max(10, x + rnd.uniform(-4, 4)))
            y = min(390, max(10, y + rnd.uniform(-4, 4)))
            stroke.append([round(x, 2), round(y, 2), t])
        strokes.append(stroke)
    return {"canvas": {"width": 600, "height": 400}, "strokes": strokes}


def body(points, seed):
    return json.dumps({"signer": {"name": "Load Test"}, "captured_at": "2025-03-01T14:05:09Z",
                       "location": {"lat": 52.52, "lon": 13.405, "accuracy_m": 8}, "ink": ink(points, seed)}).encode()


def percentile(values, q):
    if not values:
        return None
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


class Run:
    def __init__(self, args):
        self.args = args
        self.stop = time.monotonic() + args.duration
        self.lock = threading.Lock()
        self.legit, self.legit_errors, self.health, self.attacks = [], {}, [], {}

    def alive(self):
        return time.monotonic() < self.stop

    def connect(self):
        return http.client.HTTPConnection("127.0.0.1", self.args.port, timeout=30)

    def legit_worker(self, index):
        tokens = self.args.legit_tokens
        bodies = [body(300, index * 100 + k) for k in range(8)]
        conn, n = self.connect(), 0
        while self.alive():
            reference = f"{self.args.prefix}{index}-{n}"
            n += 1
            headers = {"Authorization": "Bearer " + tokens[n % len(tokens)], "Content-Type": "application/json"}
            start = time.monotonic()
            try:
                conn.request("POST", f"/v1/deliveries/{reference}/proof", body=bodies[n % len(bodies)], headers=headers)
                response = conn.getresponse()
                response.read()
                status = response.status
            except Exception as error:  # a broken connection counts as an error and is replaced
                status = type(error).__name__
                conn.close()
                conn = self.connect()
            with self.lock:
                if status == 201:
                    self.legit.append(time.monotonic() - start)
                else:
                    self.legit_errors[str(status)] = self.legit_errors.get(str(status), 0) + 1

    def health_probe(self):
        conn = self.connect()
        while self.alive():
            start = time.monotonic()
            try:
                conn.request("GET", "/healthz")
                conn.getresponse().read()
                with self.lock:
                    self.health.append(time.monotonic() - start)
            except Exception:
                conn.close()
                conn = self.connect()
            time.sleep(0.1)

    def attacker(self, token, seed, thread, heavy):
        """One of an attacker key's threads; together they send `heavy` (made before the clock
        starts, so making it holds no legitimate thread up) and resizes at the key's rate limit."""
        threads = self.args.attack_threads
        conn, n, interval = self.connect(), 0, threads / self.args.rate
        next_at = time.monotonic()
        while self.alive():
            n += 1
            headers = {"Authorization": "Bearer " + token, "Content-Type": "application/json"}
            try:
                if n % 2:
                    reference = f"{self.args.attack_prefix}{seed}-{n * threads + thread}"
                    conn.request("POST", f"/v1/deliveries/{reference}/proof", body=heavy, headers=headers)
                    kind = "upload"
                else:
                    # Its own heavy proof: a courier may fetch the images of proofs its key uploaded.
                    conn.request("GET", f"/v1/deliveries/{self.args.heavy_reference}-{seed}/proof/signature.png?width=1900",
                                 headers=headers)
                    kind = "resize"
                response = conn.getresponse()
                response.read()
                key = f"{kind} {response.status}"
            except Exception as error:
                key = f"{type(error).__name__}"
                conn.close()
                conn = self.connect()
            with self.lock:
                self.attacks[key] = self.attacks.get(key, 0) + 1
            next_at += interval
            time.sleep(max(0, next_at - time.monotonic()))

    def dripper(self):
        """Bodies dripped one byte every 5 s: half without a key (answered 401 and closed at once),
        half with an attacker's key (cut at REQUEST_TIMEOUT_SECONDS)."""
        sockets, opened = [], 0
        while self.alive():
            while len(sockets) < self.args.drip:
                opened += 1
                auth = b""
                if opened % 2 and self.args.attack_tokens:
                    auth = b"Authorization: Bearer " + self.args.attack_tokens[0].encode() + b"\r\n"
                try:
                    s = socket.create_connection(("127.0.0.1", self.args.port), timeout=5)
                    s.sendall(b"POST /v1/deliveries/D-1/proof HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                              + auth + b"Content-Length: 100000\r\n\r\n")
                    sockets.append(s)
                except OSError:
                    break
            alive = []
            for s in sockets:
                try:
                    s.sendall(b"{")
                    alive.append(s)
                except OSError:
                    s.close()
                    with self.lock:
                        self.attacks["drip cut"] = self.attacks.get("drip cut", 0) + 1
            sockets = alive
            time.sleep(5)
        for s in sockets:
            s.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--duration", type=float, default=30)
    parser.add_argument("--legit", type=int, default=8)
    parser.add_argument("--legit-tokens", type=lambda s: s.split(","), required=True)
    parser.add_argument("--prefix", default="H-")
    parser.add_argument("--attack", action="store_true")
    parser.add_argument("--attack-tokens", type=lambda s: s.split(","), default=[])
    parser.add_argument("--attack-prefix", default="X-")
    parser.add_argument("--heavy-points", type=int, default=40000)
    parser.add_argument("--heavy-reference", default="HEAVY")
    parser.add_argument("--rate", type=float, default=50)
    parser.add_argument("--attack-threads", type=int, default=2)
    parser.add_argument("--drip", type=int, default=20)
    parser.add_argument("--label", default="run")
    args = parser.parse_args()
    run = Run(args)
    threads = [threading.Thread(target=run.legit_worker, args=(i,)) for i in range(args.legit)]
    threads.append(threading.Thread(target=run.health_probe))
    if args.attack:
        heavy = [body(args.heavy_points, k) for k in range(len(args.attack_tokens))]
        run.stop = time.monotonic() + args.duration
        threads += [threading.Thread(target=run.attacker, args=(token, k, t, heavy[k]))
                    for k, token in enumerate(args.attack_tokens) for t in range(args.attack_threads)]
        threads.append(threading.Thread(target=run.dripper))
    for t in threads:
        t.daemon = True
        t.start()
    for t in threads:
        t.join(args.duration + 60)
    ms = lambda v: None if v is None else round(v * 1000, 1)
    print(json.dumps({"run": args.label, "legit_uploads_per_s": round(len(run.legit) / args.duration, 1),
                      "legit_p50_ms": ms(percentile(run.legit, 0.5)), "legit_p99_ms": ms(percentile(run.legit, 0.99)),
                      "legit_errors": run.legit_errors, "healthz_p50_ms": ms(percentile(run.health, 0.5)),
                      "healthz_p99_ms": ms(percentile(run.health, 0.99)), "healthz_max_ms": ms(max(run.health) if run.health else None),
                      "attacks": run.attacks}))


if __name__ == "__main__":
    main()
