#!/usr/bin/env bash
# Checks an audit folder the way its readers use it: the HTML report in headless Chromium
# (sections drawn, script ran, no console error, a screenshot), the Parquet tables read by
# polars / pyarrow / DuckDB, and every notebook in notebooks/ executed headless against it.
# Installs what it needs first (scripts/test-deps.sh). Usage: scripts/check-report.sh [AUDIT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
audit="${1:-reports/registries}"
bash scripts/test-deps.sh
export SKG_AUDIT_DIR="$(realpath "$audit")"
.venv/bin/python -m pytest -q -p no:cacheprovider tests/report
.venv/bin/python tests/report/run_notebooks.py
