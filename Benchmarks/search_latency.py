#!/usr/bin/env python3
"""Search latency of GET /v1/deliveries, one request at a time on one keep-alive connection.

For each named search (world, country and city bbox, near, q, flag) it sends REQUESTS requests,
every tenth continuing to the next page with the cursor of the previous answer (so paging is
measured too), after WARMUP unmeasured ones, and prints p50/p95/p99 in ms and the rows per page.

    search_latency.py --url http://127.0.0.1:PORT --token TOKEN [--requests 200] [--only "city bbox,near 5 km"]
"""
import argparse
import http.client
import json
import time
import urllib.parse

SEARCHES = {
    # Germany's box and Berlin's, as Benchmarks/scale.sh places its deliveries.
    "world bbox": "bbox=-180,-90,180,90",
    "country bbox": "bbox=5.9,47.3,15.0,55.1",
    "city bbox": "bbox=13.2,52.4,13.6,52.6",
    "antimeridian bbox": "bbox=177,-20,-178,-15",
    "sparse bbox": "bbox=34,-4.7,41.9,4.6",
    "near 5 km": "near=52.52,13.40,5000",
    "q common": "q=main%20street",
    "q rare": "q=kowalski%20123",
    # Every proof's signer (api_load.py and the grown history sign as "Load Test").
    "q signer": "q=load%20test",
    "flag": "flag=no_location",
    # Texts without three letters or digits in a row (issue 41): no trigram, so the start of the
    # reference only; before, each rechecked every row of every band.
    "q %%%": "q=%25%25%25",
    "q ---": "q=---",
    "q emoji": "q=%F0%9F%98%80%F0%9F%98%80%F0%9F%98%80",
    "q e s": "q=e%20s",
}


def percentile(values, share):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--only", help="comma-separated names of the searches to run (default: all)")
    args = parser.parse_args()
    chosen = args.only.split(",") if args.only else list(SEARCHES)
    unknown = [name for name in chosen if name not in SEARCHES]
    if unknown:
        raise SystemExit(f"unknown searches {unknown}; known: {list(SEARCHES)}")
    target = urllib.parse.urlparse(args.url)
    connection = http.client.HTTPConnection(target.hostname, target.port, timeout=60)
    headers = {"Authorization": "Bearer " + args.token}
    print(f"{'search':<18} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'rows/page':>10}")
    for name in chosen:
        query = SEARCHES[name]
        latencies, rows, cursor = [], [], None
        for i in range(args.warmup + args.requests):
            path = "/v1/deliveries?" + query
            if cursor and i % 10:
                path += "&cursor=" + cursor
            started = time.perf_counter()
            connection.request("GET", path, headers=headers)
            response = connection.getresponse()
            body = response.read()
            elapsed = (time.perf_counter() - started) * 1000
            if response.status != 200:
                raise SystemExit(f"{name}: HTTP {response.status}: {body[:300]!r}")
            page = json.loads(body)
            cursor = page.get("next_cursor")
            if i >= args.warmup:
                latencies.append(elapsed)
                rows.append(len(page["items"]))
        print(f"{name:<18} {percentile(latencies, 0.5):8.1f} {percentile(latencies, 0.95):8.1f} "
              f"{percentile(latencies, 0.99):8.1f} {sum(rows) / len(rows):10.1f}", flush=True)


if __name__ == "__main__":
    main()
