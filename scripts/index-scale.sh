#!/usr/bin/env bash
# The routing index past 100k skills (issue 14, point 7): a synthetic registry union of N skills
# (skg_canon::synth, the generator canonicalize's scaling table uses) written as SKILL.md folders,
# audited, indexed cold, then evaluated with the nearest-neighbour graph on: index build wall time
# and peak memory, the graph's build time and recall@10/@50 against the exact scan, and retrieval
# latency per query (embedding included) with the graph and without.
# usage: scripts/index-scale.sh [N] [WORK]   (default 100000; WORK kept for inspection)
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-100000}"
work="${2:-$(mktemp -d)}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}"
cargo build --quiet --profile fast -p skg
cargo build --quiet --profile fast -p skg-canon --example synth_registry
skg="$CARGO_TARGET_DIR/fast/skg"
"$CARGO_TARGET_DIR/fast/examples/synth_registry" "$n" "$work"
# t OUT CMD…: runs CMD with its stdout in OUT, prints its wall time and peak memory.
t() {
  local out=$1
  shift
  /usr/bin/time -f '%e %M' -o "$work/time" "$@" > "$out"
  read -r wall kb < "$work/time"
  echo "$wall s, peak $((kb / 1024)) MB"
}
echo "audit: $(t "$work/audit.txt" "$skg" audit "$work/registries" -o "$work/audit" -q)"
echo "index build (cold): $(t "$work/index.json" "$skg" index build "$work/audit" -o "$work/index" -q --format json)"
python3 - "$work/index.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
e = d["embedding"]
print(f'  {d["counts"]["skills"]} skills, {d["counts"]["vectors"]} vectors; embedded {e["embedded"]} texts in {e["embed_seconds"]:.0f} s ({e["texts_per_second"]:.0f}/s)')
PY
echo "index build (warm): $(t /dev/null "$skg" index build "$work/audit" -o "$work/index" -q --format json)"
echo "exact scan:"
"$skg" eval "$work/queries.jsonl" --index "$work/index" --include-quarantined 2>/dev/null | grep -E '^(mode|bm25|dense|hybrid)'
echo "with the nearest-neighbour graph:"
"$skg" eval "$work/queries.jsonl" --index "$work/index" --include-quarantined --ann 2>/dev/null | grep -E '^(mode|bm25|dense|hybrid)|nearest-neighbour graph'
echo "work folder: $work"
