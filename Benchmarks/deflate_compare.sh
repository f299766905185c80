#!/usr/bin/env bash
# How much faster would another deflate be on our PNG bytes? (issue 3/4 decision data)
#   Benchmarks/deflate_compare.sh [EVERY_NTH]     (default 16: 40 of the 640 SVC2004 signatures)
# Renders the subset with the release `countersign render` (default options), then times zlib
# with our settings against libdeflate and ISA-L on the same filtered scanlines, on core 1.
# Installs libdeflate-dev and libisal-dev when missing (Debian 12 carries both); neither is a
# dependency of the service.
set -euo pipefail
cd "$(dirname "$0")/.."
EVERY=${1:-16}
CORPUS=${COUNTERSIGN_CORPUS:-../shared/corpus}
if ! ls "$CORPUS"/svc2004-task*/*.TXT >/dev/null 2>&1; then
    echo "deflate_compare: no SVC2004 files under $CORPUS (set COUNTERSIGN_CORPUS)"; exit 1
fi
for pkg in libdeflate-dev libisal-dev; do
    dpkg -s "$pkg" >/dev/null 2>&1 || { sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo; $sudo apt-get install -y "$pkg"; }
done
swift build -c release --product countersign
BIN="$(swift build -c release --show-bin-path)/countersign"
cc -O2 -Wall -o .build/deflate_compare Benchmarks/deflate_compare.c -lz -ldeflate -lisal
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
ls "$CORPUS"/svc2004-task*/*.TXT | awk -v n="$EVERY" 'NR % n == 1' | while read -r file; do
    "$BIN" render "$file" -o "$WORK/$(basename "$(dirname "$file")")-$(basename "$file" .TXT).png"
done
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cores)"
taskset -c 1 .build/deflate_compare "$WORK"/*.png
echo "load average after:  $(cut -d' ' -f1-3 /proc/loadavg)"
