#!/usr/bin/env bash
# Runs each libFuzzer target for SECONDS (default 25) from the committed seeds, one after the other
# (never in parallel: the machine is shared), and prints one summary line per target:
#   fuzz <target> <seconds>s runs=<executions> crashes=<n> corpus=<files>
# A crash leaves the reproducer in $FUZZ_BUILD/artifacts-<target>/ and makes the script exit 1.
#
#   Fuzz/run.sh [SECONDS] [target…]
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out="${FUZZ_BUILD:-.build-fuzz}"
seconds="${1:-25}"; shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(ink_json signature_pad inkml svc2004 render)

Fuzz/build.sh "${targets[@]}" >&2 || exit 1
# libFuzzer and ASan print the crash themselves; Swift's backtracer would add a helper process
# that outlives the target and keeps a pipe on its output open.
export SWIFT_BACKTRACE=enable=no
status=0
for t in "${targets[@]}"; do
    work="$out/corpus-$t"; art="$out/artifacts-$t/"
    mkdir -p "$work" "$art"
    log="$out/fuzz-$t.log"
    # -rss_limit_mb: parsers must stay far below it; -timeout: one input may take at most 10 s
    # (a slow input is a finding too). -max_len 64 KiB reaches the size limits' code paths.
    nice -n 10 "$out/fuzz-$t" "$work" "Fuzz/corpus/$t" -max_total_time="$seconds" -max_len=65536 \
        -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$art" -print_final_stats=1 >"$log" 2>&1
    rc=$?
    runs="$(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}')"
    crashes="$(find "$art" -type f | wc -l)"
    files="$(find "$work" -type f | wc -l)"
    echo "fuzz $t ${seconds}s runs=${runs:-0} crashes=$crashes corpus=$files exit=$rc"
    if [ "$rc" != 0 ] || [ "$crashes" != 0 ]; then
        status=1
        grep -E "ERROR|Fatal error|SUMMARY|panic|fatal" "$log" | head -5 >&2
    fi
done
exit $status
