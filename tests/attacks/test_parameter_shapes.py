"""A call's parameters in shapes meant to make the gate read only a part of them.

Every path-like string of a call's parameters is a target, at any depth. The reading gave up
quietly: after 65 536 values (numbers, empty lists or names that are no paths count as well), at
16 levels of nesting, or after 65 536 leaves (a name repeated counted each time), and the
credential file behind the padding was no target: ``attach(files=["x"] * 70000 + [".env"])``
was allowed. Reading many distinct names was quadratic too (20 000 names took five seconds, the
65 536 it read a minute). Now names count once, far more values and levels are read, linearly,
and a call with more than that is refused by the gate (rule ``unread-parameters``): it is never
judged by a part of it. An argv list with a number in it (``["rm", "-rf", "/srv/data", 1]``,
which a tool writing each word as text runs) was no command at all; it is read as one.

The benign twins: the same shapes of ordinary names are allowed and run.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from secret_support import service_harness

from pytest_harness_audit.doors.tools import ToolCallBlocked
from pytest_harness_audit.policy import Policy, param_targets
from pytest_harness_audit.session.harness import Harness

SAFETY = Policy.preset("safety")


def _nested(levels: int, leaf: str) -> dict[str, Any]:
    value: dict[str, Any] = {"file": leaf}
    for _ in range(levels):
        value = {"options": value}
    return value


@pytest.mark.parametrize("tool", ["attach", "mcp__notes__attach"])
@pytest.mark.parametrize(
    "padding",
    [["x"] * 70_000, [0] * 70_000, [[]] * 70_000, ["notes/a.md"] * 70_000],
    ids=["words", "numbers", "empty-lists", "one-name-repeated"],
)
def test_the_credential_file_behind_padding_is_a_target(tool: str, padding: list[Any]) -> None:
    evaluation = SAFETY.evaluate(tool, {"files": [*padding, ".env"], "to": "review"})
    assert (evaluation.decision, evaluation.rule_id) == ("deny", "deny-secret-files")


def test_benign_twin_padding_without_a_credential_file_is_allowed() -> None:
    assert SAFETY.evaluate("attach", {"files": ["x"] * 70_000 + ["notes/a.md"]}).decision == "allow"


def test_the_credential_file_nested_deep_is_a_target() -> None:
    evaluation = SAFETY.evaluate("attach", {"spec": _nested(20, ".env"), "to": "review"})
    assert (evaluation.decision, evaluation.rule_id) == ("deny", "deny-secret-files")


def test_benign_twin_an_ordinary_file_nested_deep_is_allowed() -> None:
    assert SAFETY.evaluate("attach", {"spec": _nested(20, "notes/a.md")}).decision == "allow"


def test_many_distinct_names_are_read_in_linear_time() -> None:
    names = [f"notes/n{i}.md" for i in range(40_000)]
    started = time.perf_counter()
    evaluation = SAFETY.evaluate("attach", {"files": [*names, ".env"]})
    assert (evaluation.decision, evaluation.rule_id) == ("deny", "deny-secret-files")
    started_paths = time.perf_counter()
    evaluation = SAFETY.evaluate(
        "mcp__filesystem__read_multiple_files", {"paths": [*names, ".env"]}
    )
    assert (evaluation.decision, evaluation.rule_id) == ("deny", "deny-secret-files")
    assert started_paths - started < 5 and time.perf_counter() - started_paths < 5


@pytest.mark.parametrize(
    ("tool", "params"),
    [
        ("mcp__box__do", {"command": ["rm", "-rf", "/srv/data", 1]}),
        ("mcp__shell__run", {"command": "rm", "args": ["-rf", "/srv/data", 0]}),
        ("runner", {"argv": ["rm", "-r", "-f", "/srv/data", True]}),
    ],
)
def test_an_argv_list_with_a_number_is_read_as_a_command(tool: str, params: dict[str, Any]) -> None:
    evaluation = SAFETY.evaluate(tool, params)
    assert (evaluation.decision, evaluation.rule_id) == ("deny", "deny-destructive-commands")


def test_benign_twin_an_ordinary_argv_list_with_a_number_is_allowed() -> None:
    assert SAFETY.evaluate(
        "mcp__box__do", {"command": ["head", "-n", 20, "README.md"]}
    ).decision == ("allow")


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    yield from service_harness(tmp_path / "session")


def _send(harness: Harness, value: Any, category: str | None = None) -> bool:
    """Call a gated ``attach`` function tool with ``files=value``; whether it ran."""
    ran: list[Any] = []

    @harness.tool(name="attach", category=category)  # type: ignore[untyped-decorator]
    def attach(files: Any, to: str = "review") -> str:
        ran.append(files)
        return "attached"

    with contextlib.suppress(ToolCallBlocked):
        attach(files=value)
    return bool(ran)


def test_a_call_with_more_values_than_the_gate_reads_is_refused(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(param_targets, "MAX_VALUES", 1000)
    assert not _send(harness, ["x"] * 2000 + [".env.bak.txt"])
    (record,) = [r for r in harness.calls() if r.tool == "attach"]
    assert record.status == "blocked" and record.rule_id == "unread-parameters"
    assert harness.verdict == "FAIL"


def test_benign_twin_a_call_within_the_bounds_runs(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(param_targets, "MAX_VALUES", 1000)
    assert _send(harness, ["x"] * 500)
    assert harness.verdict == "PASS"


# a file tool (its payload is not scanned as an outgoing one, which refuses deep nesting itself)
def test_a_file_tool_s_credential_file_nested_deep_is_refused(harness: Harness) -> None:
    assert not _send(harness, _nested(20, ".env"), category="file_read")
    assert harness.verdict == "FAIL"


def test_a_call_nested_deeper_than_the_gate_reads_is_refused(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(param_targets, "_MAX_DEPTH", 40)
    assert not _send(harness, _nested(50, "notes/a.md"), category="file_read")
    (record,) = [r for r in harness.calls() if r.tool == "attach"]
    assert record.rule_id == "unread-parameters"
    assert harness.verdict == "FAIL"


def test_benign_twin_a_call_nested_within_the_bounds_runs(harness: Harness) -> None:
    assert _send(harness, _nested(30, "notes/a.md"), category="file_read")
    assert harness.verdict == "PASS"
