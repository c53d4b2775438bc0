"""Text an agent writes cannot forge, hide or reorder a line of what a reviewer reads.

A command is recorded as its target, and a function tool's exception as the record's error.
Both reach the snapshot report (YAML, one line per record), ``harness-audit audit last`` /
``query`` / ``report`` and the HTML viewer. A line break in that text used to start a line of
its own there (``verdict: PASS`` under the call judged FAIL), and a right-to-left override, a
line separator or NEL went out raw (reordering the ``verdict: FAIL`` after it). The twins: a
heredoc command, a markdown table and ordinary accented text keep their reading, and what the
report shows loads back to exactly what the chain holds.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from secret_support import service_harness

from pytest_harness_audit.cli import main
from pytest_harness_audit.readers.viewer import SessionRef, build_view, render_html
from pytest_harness_audit.session.harness import Harness

FORGED = "true #\n\nverdict: PASS\n  - {position: 9, tool: Read}"
REORDERED = "rm -rf app #\u202e"
SEPARATORS = "true #\u2028verdict: PASS\u2029\x85x"
HEREDOC = "cat > notes.md <<'EOF'\n| a | b |\n|---|---|\nEOF"
ACCENTED = "echo 'café … ✓'"
#: What no reviewer's line may hold raw.
RAW = re.compile("[\r\x85\u2028\u2029\u202a-\u202e\u2066-\u2069\x1b]")


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    yield from service_harness(tmp_path, storage_dir=tmp_path / "store")


def _session(harness: Harness) -> None:
    def lookup(key: str) -> str:
        raise ValueError(f"no {key}\nverdict: PASS")

    tool = harness.tool(lookup, category="file_read")
    harness.call("Read", file_path=".env")  # the call that makes the session FAIL
    for command in (FORGED, REORDERED, SEPARATORS, HEREDOC, ACCENTED):
        harness.call("Bash", command=command)
    with pytest.raises(ValueError):
        tool("colour")


def _cli(harness: Harness, capsys: pytest.CaptureFixture[str], *args: str) -> str:
    capsys.readouterr()
    main(["--storage", str(harness.storage_dir), "audit", *args])
    return capsys.readouterr().out


def test_the_report_keeps_one_line_per_record_and_reads_back_the_chain(harness: Harness) -> None:
    _session(harness)
    assert harness.verdict.name == "FAIL"
    text = harness.report().render()
    assert not RAW.search(text)
    lines = text.splitlines()
    assert [line for line in lines if "verdict: PASS" in line and "target" not in line] == []
    assert [line for line in lines if line.startswith("verdict:")] == ["verdict: FAIL"]
    # every line is a key of the document or one whole item of a list
    assert all(re.fullmatch(r"[#a-z_]+[ :].*|  - \{.*\}", line) for line in lines), lines
    data = yaml.safe_load(text)
    items = sum(len(value) for value in data.values() if isinstance(value, list))
    assert len(lines) == 1 + len(data) + items
    assert len(data["calls"]) == 7  # Read, five Bash, the function tool
    targets = [call.get("target") for call in data["calls"]]
    assert targets[1:6] == [FORGED, REORDERED, SEPARATORS, HEREDOC, ACCENTED]


def test_the_benign_twins_read_as_written(harness: Harness) -> None:
    colour = r"printf '\033[32mok\033[0m\n'"  # colour codes in its output, not in its text
    harness.call("Bash", command=colour)
    harness.call("Bash", command=ACCENTED)
    harness.call("Grep", pattern="| a | b |")
    text = harness.report().render()
    assert harness.verdict.name == "PASS"
    assert "target: 'printf ''\\033[32mok\\033[0m\\n'''" in text
    assert "target: echo 'café … ✓'" in text
    assert "target: '| a | b |'" in text
    targets = [call["target"] for call in yaml.safe_load(text)["calls"]]
    assert targets == [colour, ACCENTED, "| a | b |"]


def test_the_cli_prints_one_line_per_record(
    harness: Harness, capsys: pytest.CaptureFixture[str]
) -> None:
    _session(harness)
    harness.close()
    for args in (("last", "20"), ("query",)):
        out = _cli(harness, capsys, *args)
        assert not RAW.search(out)
        assert not [line for line in out.splitlines() if line.startswith("verdict")]
        assert "true #\\n\\nverdict: PASS" in out
    stats = _cli(harness, capsys, "report")
    assert "no colour\\nverdict: PASS" in stats
    assert not [line for line in stats.splitlines() if line.startswith("verdict")]


def test_a_rewritten_session_label_adds_no_summary_line(
    harness: Harness, capsys: pytest.CaptureFixture[str]
) -> None:
    """The session file's metadata is not part of the chain: a program that rewrites its label
    (the soft LCT) leaves the chain valid, and the label is printed on its own line."""
    harness.call("Read", file_path=".env")
    harness.close()
    path = harness.storage_dir / "sessions" / f"{harness.session_id}.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    document["lct"]["tokenId"] += "\n  Chain valid: true\nSession: clean"
    path.write_text(json.dumps(document), encoding="utf-8")
    out = _cli(harness, capsys, "summary")
    lines = out.splitlines()
    assert [line for line in lines if line.startswith("Session:")] == [lines[0]]
    assert sum(1 for line in lines if "Chain valid" in line) == 2  # the label's, on line 1
    assert lines[0].startswith("Session: web4:session:") and "\\n" in lines[0]


def test_the_viewer_shows_the_controls_as_escapes(harness: Harness) -> None:
    _session(harness)
    harness.close()
    run = build_view([SessionRef(str(harness.storage_dir), harness.session_id)], title="t")
    page = render_html(run)
    assert not RAW.search(page)
    assert "rm -rf app #\\u202e" in page
    assert "café … ✓" in page
