#!/usr/bin/env python3
"""Two webhook receivers on 127.0.0.1 for Benchmarks/webhook_compare.sh: FAST_PORT answers 204 at
once, SLOW_PORT after --slow-seconds (a struggling subscriber). Counts posts; prints the counts
on SIGTERM. Standard library only; loopback only.

  webhook_receiver.py FAST_PORT SLOW_PORT [--slow-seconds 2]
"""
import argparse, signal, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

counts = {"fast": 0, "slow": 0}
lock = threading.Lock()


def handler(kind, delay):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            self.rfile.read(int(self.headers.get("content-length", 0)))
            if delay:
                time.sleep(delay)
            with lock:
                counts[kind] += 1
            self.send_response(204)
            self.end_headers()
    return Handler


def main():
    p = argparse.ArgumentParser()
    p.add_argument("fast_port", type=int)
    p.add_argument("slow_port", type=int)
    p.add_argument("--slow-seconds", type=float, default=2)
    args = p.parse_args()
    servers = [ThreadingHTTPServer(("127.0.0.1", args.fast_port), handler("fast", 0)),
               ThreadingHTTPServer(("127.0.0.1", args.slow_port), handler("slow", args.slow_seconds))]
    for server in servers:
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()

    def stop(*_):
        print(f"receiver: fast {counts['fast']} posts, slow {counts['slow']} posts", flush=True)
        sys.exit(0)
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    while True:
        time.sleep(1)


if __name__ == "__main__":
    main()
