#!/usr/bin/env bash
# Writes tests/fixtures/schema-v<N>/: every table of an audit of two small demo registries
# (Parquet + NDJSON + manifest), the sample the compat test in skg-store reads back.
# Run it when SCHEMA_VERSION changes, and commit the new folder beside the old ones.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --quiet -p skg
v=$(sed -n 's/^pub const SCHEMA_VERSION: u32 = \([0-9]*\);/\1/p' crates/skg-model/src/lib.rs)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
target/debug/skg audit registries/community registries/datalab --no-embeddings -q -o "$tmp/audit" > /dev/null
out=tests/fixtures/schema-v$v
rm -rf "$out"
mkdir -p "$out"
cp "$tmp"/audit/*.parquet "$tmp"/audit/*.ndjson "$tmp"/audit/manifest.json "$tmp"/audit/_SUCCESS "$out"/
du -sh "$out"
