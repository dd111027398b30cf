#!/usr/bin/env bash
# A flat tool catalog written in each host's shape, audited, indexed and evaluated with each:
# the ranks must not depend on the shape a catalog arrives in.
# usage: scripts/catalog-shapes.sh TOOLS.jsonl QUERIES.jsonl [WORK]
#   TOOLS.jsonl: one flat {name, description, inputSchema?} per line (e.g.
#   ../shared/bench/metatool_dev/tools.jsonl); QUERIES.jsonl: judged queries over it.
#   SKG_BIN: the binary (default target/release/skg). WORK: where the catalogs, audits and
#   indexes go (default a temporary folder, removed at the end).
# Prints one line per shape: tools read, diagnostics, hybrid hit@1 / hit@5 / MRR@10.
set -euo pipefail
usage="usage: scripts/catalog-shapes.sh TOOLS.jsonl QUERIES.jsonl [WORK]"
# Paths are the caller's: resolved before moving to the repository root.
tools=$(realpath "${1:?$usage}"); queries=$(realpath "${2:?$usage}")
if [ -n "${SKG_BIN:-}" ]; then skg=$(realpath "$SKG_BIN"); fi
if [ -n "${3:-}" ]; then
  mkdir -p "$3"; work=$(realpath "$3")
else
  work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
fi
cd "$(dirname "$0")/.."
skg=${skg:-$(realpath target/release/skg)}
python3 - "$tools" "$work" <<'PY'
import json, sys
tools = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
w = sys.argv[2]
# The schema under the key each host uses for it.
def keyed(t, key):
    t = dict(t)
    if "inputSchema" in t:
        t[key] = t.pop("inputSchema")
    return t
wrap = lambda t: {"type": "function", "function": keyed(t, "parameters")}
json.dump({"tools": tools}, open(f"{w}/mcp.json", "w"))
json.dump([wrap(t) for t in tools], open(f"{w}/openai.json", "w"))
with open(f"{w}/openai-lines.jsonl", "w") as f:
    f.writelines(json.dumps(wrap(t)) + "\n" for t in tools)
json.dump([{"functionDeclarations": [keyed(t, "parametersJsonSchema") for t in tools]}],
          open(f"{w}/gemini.json", "w"))
PY
cp "$tools" "$work/flat.jsonl"
for shape in flat.jsonl mcp.json openai.json openai-lines.jsonl gemini.json; do
  o="$work/${shape%%.*}"
  rm -rf "$o"
  "$skg" audit "$work/$shape" -o "$o/audit" -q --format json > "$o.audit.json"
  "$skg" index build "$o/audit" -o "$o/index" -q > /dev/null
  "$skg" eval "$queries" --index "$o/index" --mode hybrid --format json > "$o.eval.json"
  python3 - "$shape" "$o.audit.json" "$o.eval.json" <<'PY'
import json, sys
shape, a, e = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
m = e["modes"][0]["metrics"]
print(f"{shape}: {a['skills']} tools, {a['diagnostics']} diagnostics; gold unresolved "
      f"{e['gold_unresolved']}; hybrid {m['hit'][0]:.3f} / {m['hit'][2]:.3f} / {m['mrr10']:.3f}")
PY
done
