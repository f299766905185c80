#!/usr/bin/env bash
# Builds the libFuzzer targets: each entry point in Targets/ is compiled into one module together
# with the SignatureKit sources (the renderer target also with Raster), with
# `-sanitize=fuzzer,address`, into $FUZZ_BUILD (default .build-fuzz/ at the repository root).
#
#   Fuzz/build.sh                 # all targets
#   Fuzz/build.sh ink_json render # some
#
# Targets: ink_json, signature_pad, inkml, svc2004, render.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out="${FUZZ_BUILD:-.build-fuzz}"
mkdir -p "$out"

kit=(Sources/SignatureKit/*.swift)
raster=(Sources/Raster/*.swift)

entry() {
    case "$1" in
        ink_json) echo Fuzz/Targets/InkJSONTarget.swift ;;
        signature_pad) echo Fuzz/Targets/SignaturePadTarget.swift ;;
        inkml) echo Fuzz/Targets/InkMLTarget.swift ;;
        svc2004) echo Fuzz/Targets/SVC2004Target.swift ;;
        render) echo Fuzz/Targets/RenderTarget.swift ;;
        *) echo "unknown fuzz target: $1" >&2; return 1 ;;
    esac
}

targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(ink_json signature_pad inkml svc2004 render)

for t in "${targets[@]}"; do
    src="$(entry "$t")"
    extra=()
    [ "$t" = render ] && extra=("${raster[@]}")
    bin="$out/fuzz-$t"
    # Rebuild only when a source is newer than the binary.
    if [ -x "$bin" ] && [ -z "$(find "${kit[@]}" "${extra[@]}" Fuzz/Targets/FuzzInput.swift "$src" Fuzz/build.sh -newer "$bin" 2>/dev/null)" ]; then
        echo "fuzz: $bin is up to date"
        continue
    fi
    echo "fuzz: building $bin"
    # -O keeps the fuzzer fast; -g for symbolised reports. ld.gold's "Cannot export local symbol
    # '__asan_…'" warnings are harmless and filtered.
    swiftc -sanitize=fuzzer,address -parse-as-library -O -g -module-name FuzzTarget \
        -swift-version 6 \
        "${kit[@]}" "${extra[@]}" Fuzz/Targets/FuzzInput.swift "$src" -o "$bin.tmp" 2>"$out/build-$t.log" \
        || { grep -v "Cannot export local symbol '__asan" "$out/build-$t.log" >&2; echo "fuzz: build of $t failed" >&2; exit 1; }
    grep -v "Cannot export local symbol '__asan" "$out/build-$t.log" | grep -E "warning|error" >&2 || true
    mv "$bin.tmp" "$bin"
done
