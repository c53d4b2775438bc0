"""A failing test's message quotes what agents wrote (a command, a target, a message): a
terminal control in it is printed as its escape, so it cannot erase or rewrite the line of a
denied call on the reviewer's terminal."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pytest_harness_audit.session.harness import Harness
from pytest_harness_audit.wording import visible

RUN = ("-p", "no:cacheprovider", "-p", "no:randomly", "--harness-audit")

#: Erase the line, return to its start, go up a line and erase that one too.
ERASE = "\\x1b[2K\\r\\x1b[1A\\x1b[2K"

SUITE = f"""\
import pytest


@pytest.mark.harness_workspace("python-service")
@pytest.mark.expect_verdict("PASS")
def test_marker(harness):
    harness.call("Bash", command="cat .env # {ERASE}all good")


@pytest.mark.harness_workspace("python-service")
@pytest.mark.expect_verdict("FAIL")
def test_assert_not_called(harness):
    harness.call("Read", file_path=".env{ERASE}")
    harness.assert_not_called("Read")


@pytest.mark.harness_workspace("python-service")
@pytest.mark.expect_verdict("FAIL")
def test_assert_denied(harness):
    harness.call("Read", file_path=".env{ERASE}")
    harness.assert_denied("Bash")


@pytest.mark.harness_workspace("python-service")
def test_trajectory(harness):
    harness.call("Glob", pattern="*{ERASE}")
    harness.assert_trajectory([("Read", {{}})])


@pytest.mark.harness_workspace("python-service")
@pytest.mark.harness_agents("alice", "bob")
def test_sent(harness):
    harness.send("agent:bob", "build is green{ERASE}")
    harness.assert_not_sent("agent:bob")
"""


@pytest.fixture(scope="module")
def output(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The terminal output of the suite, run once: every test fails, quoting agent text."""
    folder = tmp_path_factory.mktemp("agents")
    (folder / "test_agents.py").write_text(SUITE, encoding="utf-8")
    run = subprocess.run(
        # its own base temporary folder: a numbered one would have this run delete the
        # oldest numbered folders of other runs on the way out (seconds of work on a busy /tmp)
        [sys.executable, "-m", "pytest", *RUN, "--color=no", "--basetemp=tmp", "test_agents.py"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "5 failed" in run.stdout, run.stdout[-2000:] + run.stderr[-2000:]
    return run.stdout


ESCAPED = "\\u001b[2K\\u000d\\u001b[1A\\u001b[2K"
#: The same in a record's line, which writes the line breaks an agent wrote as ``\\r``, ``\\n``.
ESCAPED_LINE = "\\u001b[2K\\r\\u001b[1A\\u001b[2K"
REPR = "\\x1b[2K\\r\\x1b[1A\\x1b[2K"  # a trajectory step shows its parameters' repr


#: How each test's failure shows the agent's text.
SHOWN = {
    "test_marker": ESCAPED_LINE,
    "test_assert_not_called": ESCAPED_LINE,
    "test_assert_denied": ESCAPED_LINE,
    "test_trajectory": REPR,
    "test_sent": ESCAPED,
}


@pytest.mark.parametrize("test", sorted(SHOWN))
def test_agent_text_in_a_failure_is_escaped(output: str, test: str) -> None:
    section = output.split(f" {test} ", 1)[1].split("\n_____", 1)[0]
    assert SHOWN[test] in section
    assert "\x1b" not in section
    assert "\r" not in section


def test_no_raw_control_anywhere_in_the_output(output: str) -> None:
    assert "\x1b" not in output
    assert "\r" not in output


def test_the_escape_keeps_the_denied_line_readable(output: str) -> None:
    assert "FAIL: #0 Bash cat .env # \\u001b[2K\\r" in output
    assert "all good" in output


def test_a_record_line_holds_no_line_break_an_agent_wrote(tmp_path: Path) -> None:
    harness = Harness.create(tmp_path, template="python-service", policy="audit-only")
    harness.call("Bash", command="ls\n  PASS: #1 Bash rm -rf app → allow\r")
    line = harness.calls()[0].describe()
    assert "\n" not in line and "\r" not in line
    assert "ls\\n  PASS: #1 Bash rm -rf app → allow\\r" in line
    harness.close()


@pytest.mark.parametrize("hidden", ["\u2028", "\u2029"])
def test_line_and_paragraph_separators_are_shown(hidden: str) -> None:
    assert visible(f"r{hidden}m") == f"r\\u{ord(hidden):04x}m"
