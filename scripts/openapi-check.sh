#!/usr/bin/env bash
# Validates public/openapi.yaml (the document GET /openapi.yaml serves) as OpenAPI 3.1 with
# openapi-spec-validator: YAML that parses into the mapping we meant (an unquoted description
# with ", " in a flow mapping silently splits it) and a document that follows the schema.
# openapi-spec-validator is installed into .build-venv-openapi/ (ignored) on first use.
#
#   scripts/openapi-check.sh [FILE]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

spec="${1:-public/openapi.yaml}"
venv=.build-venv-openapi
version=0.9.0
if [ ! -x "$venv/bin/openapi-spec-validator" ]; then
    echo "openapi-check: installing openapi-spec-validator $version into $venv" >&2
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "openapi-spec-validator==$version"
fi
"$venv/bin/openapi-spec-validator" "$spec"
