#!/usr/bin/env bash
# The codebase table of docs/metrics.md: `skg measure --codebase` on two real agent CLIs as their
# npm packages ship them (pinned versions, sha256-checked tarballs), with test code left out (the
# default) and kept (--include-tests). Usage: scripts/codebase-measure.sh [OUT_DIR]
# Needs npm (registry access) and an skg binary ($SKG_BIN, else target/release/skg, else target/debug/skg).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-$(mktemp -d)}
mkdir -p "$out"
skg=${SKG_BIN:-}
if [ -z "$skg" ]; then
  if [ -x target/release/skg ]; then skg=target/release/skg; else skg=target/debug/skg; fi
fi
# package@version  sha256 of the tarball
pkgs=(
  "@google/gemini-cli-core@0.61.0 865fffc4cfb4dfb5b35ec686759e0e3d5b00bf7a4a8d2380e5fee687fd8ac7b0"
  "@mariozechner/pi-coding-agent@0.73.1 7bf5d492670c04fd7c599dee7e6eaabff964084affd216766107e6741df7a2e1"
)
printf '| package | tests | modules | test files left out | tools | nodes | edges | TLIS | GNCI | CFI | RScore | god nodes (first 3) |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n'
for entry in "${pkgs[@]}"; do
  spec=${entry% *}; sum=${entry#* }
  name=$(echo "$spec" | tr '@/' '__')
  dir="$out/$name"
  if [ ! -d "$dir/package" ]; then
    mkdir -p "$dir"
    (cd "$dir" && npm pack --silent "$spec" > tarball.txt)
    tgz="$dir/$(cat "$dir/tarball.txt")"
    echo "$sum  $tgz" | sha256sum -c --quiet - || { echo "$spec: sha256 mismatch" >&2; exit 1; }
    tar xzf "$tgz" -C "$dir"
  fi
  for mode in "" "--include-tests"; do
    json=$("$skg" -q measure --codebase "$dir/package" $mode -o "$dir/measure${mode:+-tests}" --format json)
    python3 - "$spec" "${mode:-no}" "$json" <<'PY'
import json, sys
spec, mode, v = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
m = v["summary"]["metrics"][0]
f = lambda x, d: "–" if x is None else f"{x:.{d}f}"
print(f"| {spec} | {'kept' if mode != 'no' else 'left out'} | {v['modules_read']} | {v['test_files_left_out']} | {v['tools']} "
      f"| {v['summary']['graph']['nodes']} | {v['summary']['graph']['edges']} | {f(m['tlis'], 2)} | {f(m['gnci'], 1)} "
      f"| {f(m['cfi'], 1)} | {f(m['rscore'], 2)} | {'; '.join(m['god_nodes'][:3])} |")
PY
  done
done
