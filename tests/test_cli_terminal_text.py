"""What the human-facing commands print never acts on the reviewer's terminal.

An agent's text reaches the chain (a Bash command is the record's target, a failing command's
last line its error). Printed raw by ``audit last``, ``query`` or ``report``, escape sequences
in it erased the line of a blocked call and rewrote the report's counts on the terminal. Now
every terminal control is printed as its ``\\uXXXX`` escape; ``--json`` still parses to the
same data, and the hook's answers to its host are written exactly as made.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_harness_audit.cli import main as cli
from pytest_harness_audit.cli.terminal_text import visible
from pytest_harness_audit.session.harness import Harness

ERASE = "\r\x1b[2K\x1b[A\x1b[2K"
SESSION = "s"


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    made = Harness.create(tmp_path, policy="safety", session_id=SESSION)
    made.call("Read", file_path=".env")  # blocked
    made.call("Bash", command=f"true #{ERASE}Read \u202eexe.tpircs")
    made.call("Bash", command="printf '\\033[16A\\233 0 blocked' >&2; exit 3")
    made.close()
    yield made


def _run(harness: Harness, capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code = cli(["--storage", str(harness.storage_dir), "audit", *argv])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out + err


@pytest.mark.parametrize("argv", [("last", "10"), ("query",), ("report",), ("summary",)])
def test_no_terminal_control_reaches_the_terminal(
    harness: Harness, capsys: pytest.CaptureFixture[str], argv: tuple[str, ...]
) -> None:
    printed = _run(harness, capsys, *argv)
    assert visible(printed) == printed
    for control in ("\x1b", "\r", "\x9b", "\u202e"):
        assert control not in printed


def test_the_blocked_call_stays_on_its_line(
    harness: Harness, capsys: pytest.CaptureFixture[str]
) -> None:
    printed = _run(harness, capsys, "last", "10")
    assert "[blocked]" in printed
    assert "\\u001b[2K" in printed and "\\u202e" in printed


def test_json_output_parses_to_the_recorded_text(
    harness: Harness, capsys: pytest.CaptureFixture[str]
) -> None:
    printed = _run(harness, capsys, "query", "--json", "--tool", "Bash")
    (session,) = json.loads(printed)["sessions"]
    targets = [record["target"] for record in session["records"]]
    assert any(ERASE in target and "\u202e" in target for target in targets)


def test_visible_keeps_ordinary_text() -> None:
    text = "tab\there, new\nline, caf\u00e9, \u65e5\u672c, emoji \U0001f600, zero\u200bwidth"
    assert visible(text) == text
    assert visible("a\x1b[2Kb\x00c\x7fd\u2066e") == "a\\u001b[2Kb\\u0000c\\u007fd\\u2066e"
