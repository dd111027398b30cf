#!/usr/bin/env bash
# The pinned Python environment for the notebooks and the Parquet readers: .venv/ from
# notebooks/requirements.txt (exact versions). Rebuilt when the requirements change.
set -euo pipefail
cd "$(dirname "$0")/.."
req=notebooks/requirements.txt
stamp=.venv/.requirements.sha256
want=$(sha256sum "$req" | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --disable-pip-version-check -r "$req"
echo "$want" > "$stamp"
.venv/bin/python -c "import polars, duckdb, pyarrow, matplotlib, nbclient; print('python-env: polars', polars.__version__, 'duckdb', duckdb.__version__, 'pyarrow', pyarrow.__version__)" >&2
