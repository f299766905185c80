#!/usr/bin/env bash
# Builds the libFuzzer targets with `-sanitize=fuzzer,address` into $FUZZ_BUILD (default
# .build-fuzz/ at the repository root). Each parser target is compiled into one module together
# with the SignatureKit sources (so internal API is reachable). The renderer target runs the
# service's whole render path, so it is linked from the modules as the package has them
# (SignatureKit, Raster, PNG with the C shim over libpng, SignatureRender, and the tests' PNG
# decoder for the oracle), each compiled here
# with the same instrumentation; the shim is compiled by clang with ASan, libpng itself is
# Debian's (not instrumented).
#
#   Fuzz/build.sh                 # all targets
#   Fuzz/build.sh ink_json render # some
#
# Targets: ink_json, signature_pad, inkml, svc2004, render.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out="${FUZZ_BUILD:-.build-fuzz}"
mkdir -p "$out"

shopt -s globstar  # the modules keep their sources in folders
kit=(Sources/SignatureKit/**/*.swift)
render_sources=(Sources/SignatureKit/**/*.swift Sources/Raster/**/*.swift Sources/PNG/**/*.swift Sources/PNGShim/PNGShim.c
                Sources/PNGShim/include/PNGShim.h Sources/SignatureRender/**/*.swift Tests/PNGTestSupport/*.swift)
# -package-name: PNGTestSupport (the oracle's PNG decoder) uses PNG's package-level shim helpers.
swift_flags=(-sanitize=fuzzer,address -parse-as-library -O -g -swift-version 6 -package-name countersign)

# The renderer's modules, one object and .swiftmodule each under $out/render-modules.
build_render_modules() {
    local m="$out/render-modules"
    mkdir -p "$m"
    printf 'module PNGShim {\n    header "%s"\n    export *\n}\n' "$PWD/Sources/PNGShim/include/PNGShim.h" >"$m/PNGShim.modulemap"
    clang -c -O1 -g -fsanitize=address,fuzzer-no-link $(pkg-config --cflags libpng) -I Sources/PNGShim/include \
        Sources/PNGShim/PNGShim.c -o "$m/PNGShim.o"
    local module sources
    for module in SignatureKit Raster PNG SignatureRender PNGTestSupport; do
        sources=(Sources/"$module"/**/*.swift)
        [ "$module" = PNGTestSupport ] && sources=(Tests/PNGTestSupport/*.swift)
        swiftc "${swift_flags[@]}" -c -wmo -module-name "$module" -emit-module-path "$m/$module.swiftmodule" \
            -I "$m" -Xcc -fmodule-map-file="$m/PNGShim.modulemap" "${sources[@]}" -o "$m/$module.o"
    done
}

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
    sources=("${kit[@]}")
    [ "$t" = render ] && sources=("${render_sources[@]}")
    bin="$out/fuzz-$t"
    # Rebuild only when a source is newer than the binary.
    if [ -x "$bin" ] && [ -z "$(find "${sources[@]}" Fuzz/Targets/FuzzInput.swift "$src" Fuzz/build.sh -newer "$bin" 2>/dev/null)" ]; then
        echo "fuzz: $bin is up to date"
        continue
    fi
    echo "fuzz: building $bin"
    # -O keeps the fuzzer fast; -g for symbolised reports. ld.gold's "Cannot export local symbol
    # '__asan_…'" warnings are harmless and filtered.
    if [ "$t" = render ]; then
        m="$out/render-modules"
        build_render_modules 2>"$out/build-$t.log" && \
        swiftc "${swift_flags[@]}" -module-name FuzzTarget -I "$m" -Xcc -fmodule-map-file="$m/PNGShim.modulemap" \
            Fuzz/Targets/FuzzInput.swift "$src" "$m"/*.o $(pkg-config --libs libpng) -o "$bin.tmp" 2>>"$out/build-$t.log"
    else
        swiftc "${swift_flags[@]}" -module-name FuzzTarget \
            "${kit[@]}" Fuzz/Targets/FuzzInput.swift "$src" -o "$bin.tmp" 2>"$out/build-$t.log"
    fi || { grep -v "Cannot export local symbol '__asan" "$out/build-$t.log" >&2; echo "fuzz: build of $t failed" >&2; exit 1; }
    grep -v "Cannot export local symbol '__asan" "$out/build-$t.log" | grep -E "warning|error" >&2 || true
    mv "$bin.tmp" "$bin"
done
