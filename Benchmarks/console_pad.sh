#!/usr/bin/env bash
# The console pad's drawing cost per pointer event (Benchmarks/console_pad_bench.py): today's pad
# (the weighted-Bézier outline) against the pad of commit 2faa6e7 (a constant-width polyline), in
# the same headless Chromium, alternating. Serves a copy of public/ with Python's static server on
# a free port (no countersign server needed) and stops it afterwards.
#
#   Benchmarks/console_pad.sh [ROUNDS]      (default 7)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

rounds="${1:-7}"
# public/ as it is, plus the pad before the outline (its peer) and a page holding both.
site="$(mktemp -d)"
cp -r public/. "$site/"
git show 2faa6e7:public/js/ink.js > "$site/js/ink-polyline.js"
cat > "$site/bench.html" <<'HTML'
<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>pad bench</title><link rel="stylesheet" href="css/console.css"><link rel="stylesheet" href="bench.css"></head><body></body></html>
HTML
echo '.bench-pad { display: block; width: 346px; height: 173px; touch-action: none; }' > "$site/bench.css"
port="$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
/usr/bin/python3 -m http.server "$port" --bind 127.0.0.1 --directory "$site" >/dev/null 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -rf "$site"' EXIT
for _ in $(seq 50); do
    curl -fsS --max-time 1 "http://127.0.0.1:$port/index.html" >/dev/null 2>&1 && break
    sleep 0.1
done
echo "console-pad: chromium $(/usr/bin/chromium --version 2>/dev/null | awk '{print $2}'), $(nproc) cores, steal $(awk '/^cpu /{print $9}' /proc/stat) jiffies so far"
/usr/bin/python3 Benchmarks/console_pad_bench.py --base-url "http://127.0.0.1:$port" --rounds "$rounds"
