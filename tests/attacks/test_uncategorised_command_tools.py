"""A tool with no category given a shell command: judged as that command too.

An agent framework's shell tool registered without a category (inspect_ai's ``bash`` takes
``cmd``; a function tool named ``shell`` or ``execute``), or an MCP tool the tables do not know
(``terminal_exec``), was judged only by the paths it names: ``rm -rf`` of a folder outside the
workspace ran, no workspace effect showed it, and the session was judged PASS. Such a call is now
judged as its command too, and a deny there refuses it (FAIL). The benign twins: the same tools
given a harmless command, or a ``command`` that is no shell text, pass; warnings on commands are
not taken (the parameter may be no shell command at all) unless the tool's name is a shell's
(``test_tool_name_spellings.py``).
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from secret_support import service_harness

from pytest_harness_audit.doors.tools import ToolCallBlocked
from pytest_harness_audit.policy import Policy
from pytest_harness_audit.session.harness import Harness

SAFETY = Policy.preset("safety")


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    yield from service_harness(tmp_path / "session")


def _bash(harness: Harness, cmd: str) -> bool:
    """Run ``cmd`` through a gated function tool named ``bash`` (no category); whether it ran."""
    ran: list[str] = []

    @harness.tool(name="bash")  # type: ignore[untyped-decorator]
    def bash(cmd: str) -> str:
        ran.append(cmd)
        done = subprocess.run(cmd, shell=True, cwd=harness.root, capture_output=True, text=True)
        return done.stdout

    with contextlib.suppress(ToolCallBlocked):
        bash(cmd)
    return bool(ran)


def test_a_bash_function_tool_deleting_outside_the_workspace_is_refused(
    harness: Harness, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    (outside / "keep").mkdir(parents=True)
    assert not _bash(harness, f"rm -rf {outside}")
    assert (outside / "keep").is_dir()
    assert harness.verdict == "FAIL"


def test_benign_twin_a_bash_function_tool_listing_files_passes(harness: Harness) -> None:
    assert _bash(harness, "ls -la")
    assert harness.verdict == "PASS"


@pytest.mark.parametrize(
    ("tool", "params", "rule"),
    [
        ("bash", {"cmd": "rm -rf /srv/data"}, "deny-destructive-commands"),
        ("execute", {"cmd": "cat .env"}, "deny-secret-files"),
        ("terminal_exec", {"command": "git clean -fdx"}, "deny-destructive-commands"),
        ("mcp__box__do", {"command": "echo x > SOUL.md"}, "deny-destructive-commands"),
        ("run", {"argv": ["rm", "-rf", "build"]}, "deny-destructive-commands"),
        ("mcp__ci__job", {"script": "rm -rf ~/work"}, "deny-destructive-commands"),
    ],
)
def test_uncategorised_tools_are_judged_as_the_command_they_are_given(
    tool: str, params: dict[str, object], rule: str
) -> None:
    evaluation = SAFETY.evaluate(tool, params)
    assert (evaluation.decision, evaluation.rule_id) == ("deny", rule)
    assert evaluation.category in {"unknown", "mcp"}  # the category itself is unchanged


@pytest.mark.parametrize(
    ("tool", "params"),
    [
        ("terminal_exec", {"command": "ls -la"}),
        ("device", {"command": "start"}),
        # a warning on commands is not taken for a tool whose name says nothing of a shell (a
        # shell's name, `bash`, is judged as `Bash`: tests/attacks/test_tool_name_spellings.py)
        ("mcp__box__do", {"cmd": "rm notes.txt"}),
        ("runner", {"cmd": "curl https://example.com"}),
        ("mcp__github__create_issue", {"title": "rm -rf /", "body": "cleanup"}),
    ],
)
def test_benign_twins_keep_their_decision(tool: str, params: dict[str, object]) -> None:
    assert SAFETY.evaluate(tool, params).decision == "allow"
