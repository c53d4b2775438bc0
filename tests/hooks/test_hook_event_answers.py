"""Each ``harness-audit hook`` subcommand answers its event in the shape the host reads, and
fails with the exit code that is safe for that event: 2 where it refuses a call, 0 with a
``deny`` decision at ``PermissionRequest`` (the host ignores exit code 2 there), 1 (shown, never
blocking) where nothing is left to refuse or blocking would harm (``Stop``: 2 would keep the agent
going)."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_harness_audit.cli import main as cli
from tests.hooks.hook_processes import answer_of

SESSION = "answers-session"
CALL = {"tool_name": "Read", "tool_input": {"file_path": "/tmp/answers/notes.txt"}}


def body(event: str, **fields: Any) -> dict[str, Any]:
    return {
        "session_id": SESSION,
        "transcript_path": "/tmp/answers/transcript.jsonl",
        "cwd": "/tmp/answers",
        "permission_mode": "default",
        "hook_event_name": event,
        **fields,
    }


#: (subcommand, a payload of its event, the answer on stdout, the exit code of a failure)
EVENTS: list[tuple[str, dict[str, Any], Any, int]] = [
    ("pre", body("PreToolUse", **CALL, tool_use_id="toolu_a1"), {}, 2),
    (
        "permission-request",
        body("PermissionRequest", **CALL, permission_suggestions=[]),
        {},
        0,
    ),
    (
        "post",
        body("PostToolUse", **CALL, tool_use_id="toolu_a1", tool_response={"type": "text"}),
        {"suppressOutput": True},
        1,
    ),
    (
        "permission-denied",
        body("PermissionDenied", **CALL, tool_use_id="toolu_a2", reason="[Data Exfiltration]"),
        {"hookSpecificOutput": {"hookEventName": "PermissionDenied", "retry": False}},
        1,
    ),
    ("stop", body("Stop", stop_hook_active=False), None, 1),
    ("session-start", body("SessionStart", source="startup"), None, 1),
    ("session-end", body("SessionEnd", reason="other"), None, 1),
]


def run(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    storage: Path,
    event: str,
    text: str,
) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "stdin", io.StringIO(text))
    code = cli(["--storage", str(storage), "hook", event, "--preset", "safety"])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize(
    ("event", "payload", "answer", "failed"), EVENTS, ids=[e[0] for e in EVENTS]
)
def test_each_event_is_answered_in_its_own_shape(
    event: str,
    payload: dict[str, Any],
    answer: Any,
    failed: int,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    start = body("SessionStart", source="startup")
    assert run(monkeypatch, capsys, tmp_path, "session-start", json.dumps(start))[0] == 0
    code, out, err = run(monkeypatch, capsys, tmp_path, event, json.dumps(payload))
    assert code == 0, err
    if answer is None:
        assert out == ""  # nothing a host could read as context or a decision
    else:
        assert answer_of(out) == answer


@pytest.mark.parametrize(
    ("event", "payload", "answer", "failed"), EVENTS, ids=[e[0] for e in EVENTS]
)
def test_each_event_fails_with_its_safe_exit_code(
    event: str,
    payload: dict[str, Any],
    answer: Any,
    failed: int,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(monkeypatch, capsys, tmp_path, event, "{broken")
    assert (code, _decision(out)) == (failed, _refused(event))
    assert len(err.splitlines()) == 1 and "invalid JSON" in err
    other = {**payload, "hook_event_name": "Notification"}  # an event it does not handle
    code, out, err = run(monkeypatch, capsys, tmp_path, event, json.dumps(other))
    assert (code, _decision(out)) == (failed, _refused(event))
    assert "'hook_event_name' is 'Notification'" in err


def _decision(out: str) -> Any:
    """The ``PermissionRequest`` decision's behaviour a failure answers (``out`` as is else)."""
    if not out:
        return out
    return answer_of(out)["hookSpecificOutput"]["decision"]["behavior"]


def _refused(event: str) -> str:
    return "deny" if event == "permission-request" else ""
