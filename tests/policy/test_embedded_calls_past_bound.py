"""A hub's inner calls past the first 32 keep the name of the tool they are for.

Past :data:`~pytest_harness_audit.policy.embedded_calls.MAX_EMBEDDED` inner calls, the others are
judged together. They used to be judged as one call naming no tool, so a PowerShell
``Remove-Item -Recurse`` standing 33rd was read as a POSIX command and allowed, and a rule on the
named tool (``tools: [mcp__git__git_push]``) never saw it. Now they are judged together for each
tool they name, and a call whose further inner calls name more tools than are judged is refused
as one not read whole.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_harness_audit.policy import Policy
from pytest_harness_audit.policy.embedded_calls import (
    MAX_EMBEDDED,
    MAX_NAMED_GROUPS,
    TOO_MANY_NAMES,
    named_embedded_calls,
)
from pytest_harness_audit.session.harness import Harness

LISTING = {"name": "shell", "arguments": {"command": "ls -la app"}}


def _batch(*tail: dict[str, Any], before: int = MAX_EMBEDDED) -> dict[str, Any]:
    return {"calls": [LISTING] * before + list(tail)}


@pytest.mark.parametrize("before", [0, MAX_EMBEDDED, MAX_EMBEDDED + 8])
def test_a_powershell_deletion_is_refused_wherever_it_stands(before: int) -> None:
    deletion = {"name": "pwsh", "arguments": {"command": "Remove-Item -Recurse -Force app"}}
    evaluation = Policy.preset("safety").evaluate(
        "mcp__hub__batch", _batch(deletion, before=before)
    )
    assert (evaluation.decision, evaluation.rule_id) == ("deny", "deny-destructive-commands")


def test_a_rule_on_the_named_tool_sees_it_past_the_bound() -> None:
    policy = Policy.from_dict(
        {
            "rules": [
                {
                    "id": "no-push",
                    "name": "no push",
                    "priority": 1,
                    "decision": "deny",
                    "match": {"tools": ["git_push"]},
                }
            ]
        }
    )
    push = {"name": "git_push", "arguments": {"path": "repo"}}
    assert policy.evaluate("mcp__hub__batch", _batch(push, before=3)).rule_id == "no-push"
    assert policy.evaluate("mcp__hub__batch", _batch(push)).rule_id == "no-push"


def test_further_calls_are_grouped_by_the_tool_they_name() -> None:
    tail: list[dict[str, Any]] = [
        {"name": "pwsh", "arguments": {"command": "Get-ChildItem app"}},
        {"name": "shell", "arguments": {"command": "pwd"}},
        {"name": "pwsh", "arguments": {"command": "Get-Date"}},
        {"arguments": {"path": "notes.md"}},
    ]
    found = named_embedded_calls(_batch(*tail))
    assert len(found) == MAX_EMBEDDED + 3
    assert found[MAX_EMBEDDED:] == [
        ("pwsh", {"paths": [], "command": "Get-ChildItem app\nGet-Date"}),
        ("shell", {"paths": [], "command": "pwd"}),
        (None, {"paths": ["notes.md"]}),
    ]


def test_ordinary_batches_keep_their_decision() -> None:
    tail = [
        {"name": f"tool{index % MAX_NAMED_GROUPS}", "arguments": {"command": "git status"}}
        for index in range(3 * MAX_NAMED_GROUPS)
    ]
    evaluation = Policy.preset("safety").evaluate("mcp__hub__batch", _batch(*tail))
    assert evaluation.decision == "allow"
    assert TOO_MANY_NAMES not in evaluation.targets
    listing = {"name": "pwsh", "arguments": {"command": "Get-ChildItem app"}}
    assert Policy.preset("safety").evaluate("mcp__hub__batch", _batch(listing)).decision == "allow"


def test_more_named_tools_than_are_judged_refuse_the_call(tmp_path: Path) -> None:
    tail = [
        {"name": f"tool{index}", "arguments": {"command": "true"}}
        for index in range(MAX_NAMED_GROUPS + 1)
    ]
    assert named_embedded_calls(_batch(*tail))[-1] == (TOO_MANY_NAMES, {})
    harness = Harness.create(tmp_path, template="python-service", policy="safety")
    try:
        ran: list[object] = []
        harness.register_tool("mcp__hub__batch", ran.append)
        result = harness.call("mcp__hub__batch", **_batch(*tail))
        assert result.status == "blocked" and ran == []
        (record,) = harness.calls(tool="mcp__hub__batch")
        assert record.rule_id == "unread-parameters"
        assert harness.verdict == "FAIL"
    finally:
        harness.close()
