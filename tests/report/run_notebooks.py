"""Executes every notebook in notebooks/ headless against an audit folder (SKG_AUDIT_DIR).

Each executed copy is written to <audit>/notebooks/<name>.ipynb, with its plots. A failing cell
fails the run with the cell's traceback.
"""

import os
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

root = Path(__file__).resolve().parents[2]
audit = Path(os.environ.get("SKG_AUDIT_DIR", root / "reports" / "registries")).resolve()
os.environ["SKG_AUDIT_DIR"] = str(audit)
out = audit / "notebooks"
out.mkdir(exist_ok=True)
notebooks = sorted((root / "notebooks").glob("*.ipynb"))
if not notebooks:
    sys.exit("no notebooks in notebooks/")
for path in notebooks:
    nb = nbformat.read(path, as_version=4)
    NotebookClient(
        nb,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    ).execute()
    nbformat.write(nb, out / path.name)
    plots = sum(
        "image/png" in o.get("data", {}) for c in nb.cells for o in c.get("outputs", [])
    )
    if plots == 0:
        sys.exit(f"{path.name}: executed, but drew no plot")
    print(f"executed {path.relative_to(root)} -> {out / path.name} ({plots} plots)")
