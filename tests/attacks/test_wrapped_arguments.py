"""A call whose one argument is an object of fields: a function tool taking one model.

pydantic-ai and the OpenAI Agents SDK hand a tool typed ``def shell(args: BashArgs)`` one model;
the door records it as ``{"args": {"command": …}}``. Targets were read from the call's own
parameters only, so the command inside the model was never read: ``rm -rf`` of a folder outside
the workspace ran through a ``command`` tool with the session PASS. A call whose one parameter
is such an object is now read as its fields (a few levels deep): the call is refused (FAIL).
The benign twins: the same tool running ``ls``, and a model of ordinary fields, pass.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import BaseModel
from secret_support import service_harness

from pytest_harness_audit.doors.tools import ToolCallBlocked
from pytest_harness_audit.policy import Policy
from pytest_harness_audit.session.harness import Harness

SAFETY = Policy.preset("safety")


class BashArgs(BaseModel):
    """A shell tool's one argument."""

    command: str


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    yield from service_harness(tmp_path / "session")


def _shell(harness: Harness, command: str) -> bool:
    """Run ``command`` through a gated ``command`` tool taking one model; whether it ran."""
    ran: list[str] = []

    def shell(args: BashArgs) -> str:
        ran.append(args.command)
        done = subprocess.run(
            args.command, shell=True, cwd=harness.root, capture_output=True, text=True
        )
        return done.stdout

    gated = harness.tool(shell, category="command")
    with contextlib.suppress(ToolCallBlocked):
        gated(BashArgs(command=command))
    return bool(ran)


def test_a_command_inside_a_model_argument_is_read(harness: Harness, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "keep").mkdir(parents=True)
    assert not _shell(harness, f"rm -rf {outside}")
    assert (outside / "keep").is_dir()
    assert harness.verdict == "FAIL"


def test_benign_twin_a_listing_inside_a_model_argument_passes(harness: Harness) -> None:
    assert _shell(harness, "ls -la")
    assert harness.verdict == "PASS"


@pytest.mark.parametrize(
    ("tool", "params", "rule"),
    [
        ("mcp__box__run", {"input": {"command": "rm -rf /srv"}}, "deny-destructive-commands"),
        ("Write", {"req": {"file_path": "SOUL.md", "content": "x"}}, "deny-persona-write"),
        ("Read", {"q": {"file_path": ".env"}}, "deny-secret-files"),
        ("bash", {"req": {"cmd": "rm -rf /srv"}}, "deny-destructive-commands"),
        ("bash", {"cmd": ["rm", "-rf", "/srv"]}, "deny-destructive-commands"),
    ],
)
def test_wrapped_and_listed_arguments_are_read(
    tool: str, params: dict[str, object], rule: str
) -> None:
    assert (SAFETY.evaluate(tool, params).decision, SAFETY.evaluate(tool, params).rule_id) == (
        "deny",
        rule,
    )


@pytest.mark.parametrize(
    ("tool", "params"),
    [
        ("mcp__box__run", {"input": {"command": "ls"}}),
        ("Write", {"req": {"file_path": "notes.md", "content": "rm -rf /"}}),
        ("mcp__crm__create", {"contact": {"name": "Ada", "email": "ada@example.com"}}),
    ],
)
def test_benign_twins_keep_their_decision(tool: str, params: dict[str, object]) -> None:
    assert SAFETY.evaluate(tool, params).decision == "allow"
