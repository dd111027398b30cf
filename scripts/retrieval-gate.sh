#!/usr/bin/env bash
# Retrieval regression gate: audit ../shared/registries, build its routing index cold, rank the
# corpus dev queries (quarantine off) and compare every query's rank with the committed baseline
# (tests/fixtures/retrieval/corpus-dev-ranks.json: query ids and ranks only, no query text):
# `skg eval --compare … --fail-if-worse 0.05` fails when a metric of a mode is worse than the
# baseline with a Holm-adjusted p ≤ 0.05 (on 70 queries: about 6–10 queries net). The table of
# differences is printed either way, so a run shows what a change moved.
#   scripts/retrieval-gate.sh            # check (CI)
#   scripts/retrieval-gate.sh --update   # after an intended ranking change: rewrite the baseline
# SKG_BIN (default target/debug/skg), SKG_SHARED_DIR (default ../shared), WORK (default a
# temporary folder). Without ../shared it skips with a message, unless SKG_REQUIRE_TEST_INPUTS=1.
set -euo pipefail
cd "$(dirname "$0")/.."
skg=$(realpath "${SKG_BIN:-target/debug/skg}")
shared=${SKG_SHARED_DIR:-../shared}
baseline=tests/fixtures/retrieval/corpus-dev-ranks.json
queries=$shared/bench/queries_dev.jsonl
if [ ! -f "$queries" ] || [ ! -f "$shared/registries/registries.toml" ]; then
  if [ "${SKG_REQUIRE_TEST_INPUTS:-}" = 1 ]; then
    echo "retrieval gate: $shared (registries, bench/queries_dev.jsonl) is required here" >&2; exit 1
  fi
  echo "retrieval gate skipped: $shared not found (set SKG_SHARED_DIR)"; exit 0
fi
work=${WORK:-$(mktemp -d)}
mkdir -p "$work"
"$skg" -q audit "$shared/registries/registries.toml" -o "$work/audit" > /dev/null
"$skg" -q index build "$work/audit" -o "$work/index" > /dev/null
if [ "${1:-}" = --update ]; then
  "$skg" -q eval "$queries" --index "$work/index" --include-quarantined --per-query --format json > "$work/eval.json"
  # Ids and ranks only: timings and paths change from run to run.
  python3 - "$work/eval.json" "$baseline" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
out = {
    "index_revision": d["index_revision"],
    "queries": d["queries"],
    "include_quarantined": d["include_quarantined"],
    "modes": [{"mode": m["mode"], "per_query": m["per_query"]} for m in d["modes"]],
}
with open(sys.argv[2], "w") as f:
    json.dump(out, f, indent=1)
PY
  echo "retrieval gate: baseline rewritten ($baseline, index $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["index_revision"][:12])' "$baseline"))"
  exit 0
fi
"$skg" -q eval "$queries" --index "$work/index" --include-quarantined \
  --compare "$baseline" --fail-if-worse 0.05
