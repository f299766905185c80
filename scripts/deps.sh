#!/usr/bin/env bash
# Installs the Debian packages Countersign needs to build, run and test, skipping what is present.
set -euo pipefail

PACKAGES=(
    pkg-config libpq-dev libpng-dev zlib1g-dev libssl-dev libdeflate-dev   # build: libpq, libpng, zlib, libcrypto, libdeflate headers
    postgresql                                   # the local database under .data/
    librsvg2-bin                                 # tests: independent SVG rasteriser (rsvg-convert)
    curl python3-yaml                            # make run / smoke and deploy-file checks
    chromium chromium-driver python3-selenium    # tests: the web console in headless chromium (scripts/browser-test.sh)
    ${COUNTERSIGN_EXTRA_PACKAGES:-}
)

missing=()
for package in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done

if ! command -v swift >/dev/null 2>&1; then
    echo "deps: the Swift toolchain (6.1 or later) is not on PATH; install it from swift.org first" >&2
    exit 1
fi

if [ ${#missing[@]} -eq 0 ]; then exit 0; fi

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
echo "deps: installing ${missing[*]}"
# Debian's postgresql package would create and start a 'main' cluster on port 5432; we keep our
# own under .data/, so ask postgresql-common not to create one.
if [[ " ${missing[*]} " == *" postgresql "* ]]; then
    $SUDO mkdir -p /etc/postgresql-common/createcluster.d
    echo "create_main_cluster = false" | $SUDO tee /etc/postgresql-common/createcluster.d/countersign.conf >/dev/null
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "deps: done"
