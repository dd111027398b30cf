#!/usr/bin/env bash
# Scaling of `skg canonicalize` on synthetic registries (near-copies and variants of generated
# originals): wall time and peak memory at each size, with embeddings (cold cache) unless
# SKG_SCALE_FLAGS=--no-embeddings. Sizes: arguments (default 10000 30000 100000).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}"
cargo build --quiet --profile fast -p skg
skg="$CARGO_TARGET_DIR/fast/skg"
sizes=("$@")
[ ${#sizes[@]} -eq 0 ] && sizes=(10000 30000 100000)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '%8s %10s %10s %12s %10s %10s %12s\n' skills wall_s embed_s dedup_s peak_MB candidates precision/recall
for n in "${sizes[@]}"; do
  /usr/bin/time -f '%e %M' -o "$work/time" "$skg" canonicalize --synthetic "$n" -o "$work/out-$n" -q \
    ${SKG_SCALE_FLAGS:-} --format json > "$work/summary.json"
  read -r wall kb < "$work/time"
  python3 - "$work/summary.json" "$n" "$wall" "$kb" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
n, wall, kb = sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
t = s["synthetic"]
print(f'{n:>8} {wall:>10.1f} {s["seconds"]["embed"]:>10.1f} {s["seconds"]["dedup"]:>12.1f} {kb/1024:>10.0f} '
      f'{s["stats"]["candidate_pairs"]:>10} {t["precision"]:.3f}/{t["recall"]:.3f}')
PY
  rm -rf "$work/out-$n"
done
