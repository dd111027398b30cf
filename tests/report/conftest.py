import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def audit() -> Path:
    """The audit folder under test: SKG_AUDIT_DIR, else the demo audit (scripts/demo.sh)."""
    path = Path(os.environ.get("SKG_AUDIT_DIR", ROOT / "reports" / "registries"))
    if not (path / "_SUCCESS").is_file():
        pytest.fail(
            f"{path} is not a finished audit: run scripts/demo.sh or set SKG_AUDIT_DIR"
        )
    return path


@pytest.fixture(scope="session")
def manifest(audit: Path) -> dict:
    return json.loads((audit / "manifest.json").read_text())
