"""A secret split by a terminal's codes: ``grep --color=always`` wraps every match in colour
escapes, ``man``-style output strikes each character over with a backspace, a link (OSC 8) wraps
part of it. The scan reads the text without them; text with ordinary colours is left alone."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from scan_support import KEY

from pytest_harness_audit.inspect.secrets import SecretRegistry, fingerprint

MARK = f"[secret:{fingerprint(KEY)}]"


@pytest.fixture(scope="module")
def registry() -> SecretRegistry:
    registry = SecretRegistry()
    registry.add(KEY, "env")
    return registry


def _coloured(text: str, pattern: str) -> str:
    return re.sub(pattern, lambda m: f"\x1b[01;31m\x1b[K{m.group()}\x1b[m\x1b[K", text)


@pytest.mark.parametrize(
    "text",
    [
        "API_KEY=" + _coloured(KEY, r"[0-9]"),
        "API_KEY=" + _coloured(KEY, r"[a-f]"),
        "API_KEY=" + _coloured(KEY, r"."),
        "".join(f"{c}\b{c}" for c in KEY),
        f"\x1b]8;;https://example.com\x07{KEY[:9]}\x1b]8;;\x07{KEY[9:]}",
        "\x1b[1m" + "\x1b[0m\x1b[1m".join(KEY) + "\x1b[0m",
    ],
)
def test_a_secret_split_by_terminal_codes_is_found_and_redacted(registry, text):
    assert registry.scan(text).findings
    redacted = registry.redact(text)
    assert MARK in redacted
    assert KEY[-8:] not in re.sub(r"\x1b\[[0-9;]*[A-Za-z]|.\x08", "", redacted)


def test_real_grep_colour_output_is_found(registry, tmp_path: Path):
    grep = shutil.which("grep")
    if grep is None:
        pytest.skip("no grep here")
    (tmp_path / ".env").write_text(f"API_KEY={KEY}\n", encoding="utf-8")
    shown = subprocess.run(
        [grep, "-r", "--color=always", "[0-9]", "."],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "\x1b[" in shown
    assert registry.scan(shown).findings


@pytest.mark.parametrize(
    "text",
    [
        "\x1b[32mPASSED\x1b[0m tests/test_app.py::test_one",
        "\x1b[1;31mFAILED\x1b[0m 1 failed, 12 passed in 0.31s",
        "progress 40%\b\b\b50%",
    ],
)
def test_ordinary_coloured_output_has_no_secret(registry, text):
    assert not registry.scan(text).findings
