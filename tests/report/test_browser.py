"""The HTML report rendered by headless Chromium (Debian's package): every main section drawn,
the table script ran to the end, no console error, a screenshot taken.

SKG_SCREENSHOT names the PNG to write (default: <audit>/screenshot.png)."""

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

SECTIONS = [
    "summary",
    "registries",
    "duplicates",
    "slop",
    "graph",
    "security",
    "diagnostics",
]
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--enable-logging=stderr",
    "--v=0",
]


def chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        pytest.fail("chromium is not installed: run scripts/test-deps.sh")
    return exe


def run(args: list[str]) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run(
            [chromium(), *FLAGS, f"--user-data-dir={profile}", *args],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )


@pytest.fixture(scope="module")
def page(audit: Path):
    url = (audit / "index.html").resolve().as_uri()
    r = run(["--virtual-time-budget=5000", "--dump-dom", url])
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout, r.stderr


def test_main_sections_render(page):
    dom, _ = page
    for s in SECTIONS:
        assert f'<section id="{s}">' in dom, s
        body = dom.split(f'<section id="{s}">', 1)[1].split("</section>", 1)[0]
        assert "<h2>" in body and len(body) > 200, s
    assert "<svg" in dom


def test_script_ran_without_errors(page):
    dom, stderr = page
    html_tag = re.search(r"<html[^>]*>", dom).group(0)
    assert 'data-ready="1"' in html_tag, html_tag
    assert "data-errors" not in html_tag, html_tag
    console = [l for l in stderr.splitlines() if "CONSOLE" in l or "Uncaught" in l]
    assert console == [], console
    ready_ms = re.search(r'data-ready-ms="(\d+)"', html_tag)
    assert ready_ms, html_tag
    print(f"report script finished {ready_ms.group(1)} ms after navigation start")


def test_screenshot(audit: Path):
    shot = Path(os.environ.get("SKG_SCREENSHOT", audit / "screenshot.png")).resolve()
    shot.parent.mkdir(parents=True, exist_ok=True)
    shot.unlink(missing_ok=True)
    url = (audit / "index.html").resolve().as_uri()
    r = run(["--window-size=1400,1800", f"--screenshot={shot}", url])
    assert r.returncode == 0, r.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = (
        int.from_bytes(data[16:20], "big"),
        int.from_bytes(data[20:24], "big"),
    )
    assert (width, height) == (1400, 1800)
    assert len(data) > 50_000  # a blank page compresses to a few KB
