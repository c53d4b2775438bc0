"""Headless Chromium for the screenshot tests: find it, take a screenshot, dump the DOM.

The tests skip, saying why, where no Chromium is on ``PATH``; ``.ci/run`` installs one and sets
``HARNESS_AUDIT_REQUIRE_CHROMIUM``, which turns that skip into a failure. The PNGs go to
``$HARNESS_AUDIT_ARTIFACTS`` (a temporary folder when unset).
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
MISSING = (
    "headless Chromium not found on PATH (looked for chromium, chromium-browser, google-chrome); "
    "install it (Debian: apt-get install -y chromium) to take the viewer's screenshots"
)
#: Generous: a loaded 2-core machine can take many seconds to start a browser.
TIMEOUT = 180


def find_chromium() -> str | None:
    """The first Chromium on ``PATH``, or ``None``."""
    return next((found for name in NAMES if (found := shutil.which(name))), None)


def chromium_or_skip() -> str:
    """The Chromium to use, or skip the test with the reason."""
    found = find_chromium()
    if found is None:
        if os.environ.get("HARNESS_AUDIT_REQUIRE_CHROMIUM"):
            pytest.fail(MISSING, pytrace=False)
        pytest.skip(MISSING)
    return found


def artifacts_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where screenshots go: ``$HARNESS_AUDIT_ARTIFACTS`` or a temporary folder."""
    chosen = os.environ.get("HARNESS_AUDIT_ARTIFACTS")
    folder = Path(chosen) if chosen else tmp_path_factory.mktemp("artifacts")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _run(browser: str, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [
        browser,
        "--headless",
        "--no-sandbox",  # containers run as root, where the sandbox cannot start
        "--disable-gpu",
        "--hide-scrollbars",
        "--no-first-run",
        "--disable-extensions",
        f"--user-data-dir={profile}",
        *args,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT, check=False)


def screenshot(
    browser: str, page: Path, png: Path, profile: Path, *, width: int = 1400, height: int = 1000
) -> tuple[int, int]:
    """Screenshot ``page`` at ``width``×``height`` into ``png``; return the PNG's size."""
    png.unlink(missing_ok=True)
    result = _run(
        browser,
        profile,
        f"--screenshot={png}",
        f"--window-size={width},{height}",
        "--virtual-time-budget=3000",
        page.resolve().as_uri(),
    )
    assert png.is_file(), f"no screenshot written: {result.stderr[-2000:]}"
    return png_size(png)


def dump_dom(browser: str, page: Path, profile: Path) -> str:
    """The DOM after the page's scripts ran (pytest-html builds its rows in JavaScript)."""
    result = _run(
        browser, profile, "--dump-dom", "--virtual-time-budget=5000", page.resolve().as_uri()
    )
    assert result.stdout.strip(), f"no DOM dumped: {result.stderr[-2000:]}"
    return result.stdout


def png_size(png: Path) -> tuple[int, int]:
    """Width and height from a PNG's header."""
    data = png.read_bytes()[:24]
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{png} is not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    return width, height
