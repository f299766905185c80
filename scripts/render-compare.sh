#!/usr/bin/env bash
# Renders every recording of the real-ink corpus and the repository's own ink fixtures
# (Fuzz/corpus: ink JSON, signature_pad, InkML, SVC2004) with two `countersign` binaries and
# compares what each wrote: the PNG and SVG bytes (sha256), the exit status and the stderr line.
# A change that must not alter stored proofs (a restructure, a refactor of the engine) should
# report 0 differences against the binary of the commit it started from.
#
#   scripts/render-compare.sh BASELINE_BINARY CANDIDATE_BINARY
#
# Each input is rendered four ways: the defaults (PNG and SVG, as an upload is stored) and a
# styled layout (trim, fixed width, margin, colour, white background, zlib PNG) that reaches the
# other paths of the layout and the PNG encoder. COUNTERSIGN_CORPUS overrides ../shared/corpus;
# when the corpus is absent only the fixtures are compared. The corpus has no redistribution
# licence: it is read where it is and never copied. JOBS (default 2) inputs run at a time.
#
# A script rather than a test: it compares two builds (the baseline is another commit's binary),
# which a test of one build cannot do.
set -euo pipefail
if [ $# -ne 2 ]; then
    echo "usage: $0 BASELINE_BINARY CANDIDATE_BINARY" >&2
    exit 2
fi
for bin in "$1" "$2"; do
    [ -x "$bin" ] || { echo "render-compare: $bin is not an executable" >&2; exit 2; }
done
baseline="$(readlink -f "$1")"
candidate="$(readlink -f "$2")"
cd "$(dirname "${BASH_SOURCE[0]}")/.."

corpus="${COUNTERSIGN_CORPUS:-../shared/corpus}"
inputs=()
if [ -d "$corpus" ]; then
    mapfile -t inputs < <(find "$corpus" -type f ! -name 'README*' ! -name '.*' | sort)
else
    echo "render-compare: no corpus at $corpus (set COUNTERSIGN_CORPUS): the fixtures only" >&2
fi
mapfile -t -O "${#inputs[@]}" inputs < <(find Fuzz/corpus/ink_json Fuzz/corpus/signature_pad Fuzz/corpus/inkml \
    Fuzz/corpus/svc2004 -type f | sort)

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# One line per render: variant, exit status, sha256 of the output (or "-"), the stderr text.
render_all() {
    local bin="$1" input="$2" out="$3" variant ext rc
    local -a styled=(--trim --width 480 --margin 8 --color '#1F4E9A' --background white --png-compressor zlib)
    for variant in default.png default.svg styled.png styled.svg; do
        ext="${variant##*.}"
        rm -f "$out.$ext"
        rc=0
        if [ "${variant%%.*}" = styled ]; then
            "$bin" render "$input" -o "$out.$ext" "${styled[@]}" 2>"$out.err" || rc=$?
        else
            "$bin" render "$input" -o "$out.$ext" 2>"$out.err" || rc=$?
        fi
        if [ -f "$out.$ext" ]; then sha="$(sha256sum <"$out.$ext" | cut -d' ' -f1)"; else sha=-; fi
        echo "$variant exit=$rc sha256=$sha stderr=$(tr '\n' ' ' <"$out.err")"
    done
}

# Renders one input (by index) with both binaries; prints "same" or the differing lines.
compare_one() {
    local i="$1" input="${inputs[$1]}"
    render_all "$baseline" "$input" "$work/b$i" >"$work/b$i.txt"
    render_all "$candidate" "$input" "$work/c$i" >"$work/c$i.txt"
    if cmp -s "$work/b$i.txt" "$work/c$i.txt"; then
        echo "same $(grep -c 'exit=0' "$work/b$i.txt")"
    else
        echo "DIFFERENT $input"
        diff "$work/b$i.txt" "$work/c$i.txt" | sed 's/^/    /'
    fi
    rm -f "$work/b$i".* "$work/c$i".*
}
export -f render_all compare_one
export baseline candidate work
# Arrays cannot be exported: hand the list over in a file.
printf '%s\n' "${inputs[@]}" >"$work/inputs"
results="$work/results"
seq 0 $((${#inputs[@]} - 1)) | xargs -P "${JOBS:-2}" -I{} bash -c \
    'mapfile -t inputs <"$work/inputs"; compare_one "$1"' _ {} >"$results"

differences=$(grep -c '^DIFFERENT' "$results" || true)
rendered=$(awk '$1 == "same" { n += $2 } END { print n + 0 }' "$results")
grep -v '^same' "$results" || true
echo "render-compare: ${#inputs[@]} inputs × 4 renders (PNG, SVG; default and styled) with each binary;" \
     "$rendered renders succeeded identically; $differences inputs differ"
[ "$differences" -eq 0 ]
