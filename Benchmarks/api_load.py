#!/usr/bin/env python3
"""Load generator for the Countersign API on loopback (bounded in time, stops by itself).

Keep-alive HTTP/1.1 over raw asyncio sockets, N connections per process, P processes.

  upload: POST /v1/deliveries/{prefix}{i}/proof with real SVC2004 corpus signatures converted to
          countersign.ink/v1, or synthetic ones when the corpus is absent (one proof per delivery;
          create the deliveries first, see --help). --idempotency adds an Idempotency-Key.
The fault and soak runs of `make reliability` use Tests/reliability/reliability.py (threads,
retries and a record of every acknowledged proof) rather than this throughput generator.
  png:    GET  /v1/deliveries/{reference}/proof/signature.png for one stored proof.
  bodies: write the upload bodies to --out, one per line, for wrk and Benchmarks/upload.lua
          (lighter on the shared CPU than this generator; api_bench.sh uses it).

Prints requests/s, latency percentiles and any non-2xx statuses.
"""
import argparse, asyncio, glob, json, math, multiprocessing, os, time
from urllib.parse import urlparse


def svc_to_ink(path):
    rows = [l.split() for l in open(path).read().splitlines()[1:] if l.strip()]
    pts = [(int(r[0]), int(r[1]), int(r[2]), int(r[3])) for r in rows]
    xs = [p[0] for p in pts]; ys = [p[1] for p in pts]
    minx, maxx, miny, maxy = min(xs), max(xs), min(ys), max(ys)
    width = 600.0
    scale = (width - 40) / max(1, maxx - minx)
    height = round((maxy - miny) * scale + 40, 3)
    t0 = pts[0][2]
    strokes, cur = [], []
    for x, y, t, button in pts:
        if button == 0 and cur:
            strokes.append(cur); cur = []
        cur.append([round(20 + (x - minx) * scale, 3), round(20 + (maxy - y) * scale, 3), t - t0])
    if cur:
        strokes.append(cur)
    return {"canvas": {"width": width, "height": height}, "strokes": strokes}


def synthetic_ink(seed):
    """A plausible three-stroke signature when the corpus is absent (deterministic per seed)."""
    strokes, t = [], 0
    for s in range(3):
        points = []
        for i in range(60):
            points.append([round(40 + s * 170 + i * 2.5, 3), round(100 + 45 * math.sin(i / 6 + s + seed), 3), t])
            t += 10
        t += 250
        strokes.append(points)
    return {"canvas": {"width": 600, "height": 200}, "strokes": strokes}


def bodies(corpus):
    files = sorted(glob.glob(os.path.join(corpus, "svc2004-task*", "*.TXT")))
    out = []
    if not files:
        # No corpus (it is not redistributed): synthetic signatures keep the generator usable.
        for seed in range(64):
            doc = {"signer": {"name": "Load Test"}, "captured_at": "2025-03-01T14:05:09+01:00",
                   "location": {"lat": 52.5201, "lon": 13.4051, "accuracy_m": 8},
                   "device": {"id": "bench", "model": "bench", "os": "linux", "app": "api_load.py"},
                   "ink": synthetic_ink(seed)}
            out.append(json.dumps(doc, separators=(",", ":")).encode())
        return out
    for f in files:
        doc = {"signer": {"name": "Load Test"}, "captured_at": "2025-03-01T14:05:09+01:00",
               "location": {"lat": 52.5201, "lon": 13.4051, "accuracy_m": 8},
               "device": {"id": "bench", "model": "bench", "os": "linux", "app": "api_load.py"},
               "ink": svc_to_ink(f)}
        out.append(json.dumps(doc, separators=(",", ":")).encode())
    return out


async def read_response(reader):
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head[9:12])
    length = 0
    for line in head.split(b"\r\n")[1:]:
        if line[:15].lower() == b"content-length:":
            length = int(line[15:])
    if length:
        await reader.readexactly(length)
    return status


async def worker(args, host, port, counter, deadline, latencies, statuses, payloads):
    reader, writer = await asyncio.open_connection(host, port)
    while time.perf_counter() < deadline:
        i = next(counter)
        if args.mode == "upload":
            if i >= args.count:
                break
            body = payloads[i % len(payloads)]
            key = f"Idempotency-Key: {args.prefix}{i}\r\n" if args.idempotency else ""
            req = (f"POST /v1/deliveries/{args.prefix}{i}/proof HTTP/1.1\r\nHost: {host}\r\n"
                   f"Authorization: Bearer {args.token}\r\nContent-Type: application/json\r\n{key}"
                   f"Content-Length: {len(body)}\r\n\r\n").encode() + body
        else:
            req = (f"GET /v1/deliveries/{args.reference}/proof/signature.png HTTP/1.1\r\nHost: {host}\r\n"
                   f"Authorization: Bearer {args.token}\r\n\r\n").encode()
        start = time.perf_counter()
        writer.write(req)
        status = await read_response(reader)
        latencies.append(time.perf_counter() - start)
        statuses[status] = statuses.get(status, 0) + 1
    writer.close()


def run_process(args, index, queue):
    url = urlparse(args.url)
    payloads = bodies(args.corpus) if args.mode == "upload" else []
    # Each process takes every P-th delivery index.
    def counter_gen():
        i = index
        while True:
            yield i
            i += args.processes
    counter = counter_gen()
    latencies, statuses = [], {}

    async def main():
        deadline = time.perf_counter() + args.duration
        await asyncio.gather(*[worker(args, url.hostname, url.port, counter, deadline, latencies, statuses, payloads)
                               for _ in range(args.connections)])
    start = time.perf_counter()
    asyncio.run(main())
    queue.put((latencies, statuses, time.perf_counter() - start, len(payloads)))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--url", default="http://127.0.0.1:8080")
    p.add_argument("--token", required=True)
    p.add_argument("--mode", choices=["upload", "png", "bodies"], default="upload")
    p.add_argument("--out", help="bodies: the file to write")
    p.add_argument("--duration", type=float, default=60)
    p.add_argument("--connections", type=int, default=8, help="per process")
    p.add_argument("--processes", type=int, default=1)
    p.add_argument("--prefix", default="B-", help="upload: deliveries are {prefix}0 ... {prefix}{count-1}")
    p.add_argument("--count", type=int, default=40000)
    p.add_argument("--reference", help="png: a delivery that has a proof")
    p.add_argument("--idempotency", action="store_true", help="upload: send Idempotency-Key: {prefix}{i}")
    p.add_argument("--corpus", default=os.path.join(os.path.dirname(__file__), "..", "..", "shared", "corpus"))
    args = p.parse_args()
    if args.mode == "bodies":
        payloads = bodies(args.corpus)
        with open(args.out, "wb") as out:
            for payload in payloads:
                out.write(payload + b"\n")
        print(f"bodies={len(payloads)} file={args.out}")
        return
    queue = multiprocessing.Queue()
    procs = [multiprocessing.Process(target=run_process, args=(args, i, queue)) for i in range(args.processes)]
    for pr in procs:
        pr.start()
    results = [queue.get() for _ in procs]
    for pr in procs:
        pr.join()
    latencies = sorted(l for r in results for l in r[0])
    statuses = {}
    for r in results:
        for k, v in r[1].items():
            statuses[k] = statuses.get(k, 0) + v
    elapsed = max(r[2] for r in results)
    n = len(latencies)
    pct = lambda q: latencies[min(n - 1, int(q * n))] * 1000 if n else float("nan")
    print(f"mode={args.mode} requests={n} seconds={elapsed:.1f} rate={n / elapsed:.0f}/s "
          f"p50={pct(0.5):.1f}ms p90={pct(0.9):.1f}ms p99={pct(0.99):.1f}ms max={pct(1.0):.1f}ms "
          f"statuses={dict(sorted(statuses.items()))} corpus_bodies={results[0][3]}")


if __name__ == "__main__":
    main()
