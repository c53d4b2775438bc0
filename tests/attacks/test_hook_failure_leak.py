"""A known key in the error text of a failed call at the hook door (``PostToolUseFailure``).

The host gives the model a failed call's error as its result and lets a hook replace none of
it: the event's only own field is ``additionalContext``. So the leak is recorded and judged as a
``PostToolUse`` output leak (the session fails), and the answer uses what the host has: context
beside the error telling the model it read a known secret (by label and marker, never the value)
and a ``systemMessage`` for the user; no field the host does not support for this event. Each
event is a process of its own, as the host runs it. The benign twins: an ordinary failure, and
one quoting only the key's vendor prefix, are answered and judged as before.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_harness_audit.readers.verdict import Verdict
from tests.hooks.hook_processes import call_records, hook, verdict

KEY = "sk-live-9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a"
CORE = KEY[len("sk-live-") :]
SESSION = "failure-leak"
#: What the host accepts in a ``PostToolUseFailure`` answer (common fields and its own).
FAILURE_FIELDS = {"continue", "stopReason", "suppressOutput", "systemMessage", "hookSpecificOutput"}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / ".env").write_text(f"API_KEY={KEY}\n", encoding="utf-8")
    return root


def _base(project: Path, tool: str, index: int, tool_input: dict[str, Any]) -> dict[str, Any]:
    return {
        "session_id": SESSION,
        "transcript_path": str(project / "t.jsonl"),
        "cwd": str(project),
        "permission_mode": "default",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": f"toolu_fail_{index}",
    }


def _failed(
    storage: Path, project: Path, error: str, *, tool: str = "Bash", index: int = 0
) -> dict[str, Any]:
    """pre (let through), then ``PostToolUseFailure`` with ``error``: the post's answer."""
    tool_input = {"command": "npm test", "description": "Run tests"} if tool == "Bash" else {}
    base = _base(project, tool, index, tool_input)
    code, out, err = hook(storage, "pre", {**base, "hook_event_name": "PreToolUse"})
    assert code == 0, err
    assert json.loads(out).get("hookSpecificOutput", {}).get("permissionDecision") != "deny"
    failure = {
        **base,
        "hook_event_name": "PostToolUseFailure",
        "error": error,
        "is_interrupt": False,
        "duration_ms": 40,
    }
    code, out, err = hook(storage, "post", failure)
    assert code == 0, err
    answer: dict[str, Any] = json.loads(out)
    return answer


def _assert_notice(answer: dict[str, Any]) -> None:
    assert set(answer) <= FAILURE_FIELDS, answer
    assert answer.get("continue", True) is True  # the agent goes on, told
    specific = answer["hookSpecificOutput"]
    assert set(specific) == {"hookEventName", "additionalContext"}  # no replacement field
    assert specific["hookEventName"] == "PostToolUseFailure"
    assert "known secret" in specific["additionalContext"]
    assert ".env:API_KEY [secret:" in specific["additionalContext"]
    assert "known secret" in answer["systemMessage"]
    text = json.dumps(answer)
    assert KEY not in text
    for start in range(len(CORE) - 7):
        assert CORE[start : start + 8] not in text


def test_a_key_in_a_failed_command_s_error_is_judged_and_the_model_told(
    project: Path, tmp_path: Path
) -> None:
    storage = tmp_path / "store"
    error = f"Exit code 1\nloading config\nAPI_KEY={KEY}\nError: connection refused"
    _assert_notice(_failed(storage, project, error))
    (record,) = call_records(storage, SESSION)
    assert record["result"]["status"] == "error"
    assert "secret_exposure" in record["alerts"] and record["judged"]["verdict"] == "FAIL"
    assert KEY not in record["result"]["errorMessage"]
    assert verdict(storage, SESSION) is Verdict.FAIL
    assert KEY not in (storage / "audit" / f"{SESSION}.jsonl").read_text(encoding="utf-8")


def test_a_key_in_a_failed_mcp_call_s_error_gets_no_mcp_replacement(
    project: Path, tmp_path: Path
) -> None:
    storage = tmp_path / "store"
    answer = _failed(storage, project, f"MCP error -32602: bad token {KEY}", tool="mcp__x__get")
    _assert_notice(answer)
    assert verdict(storage, SESSION) is Verdict.FAIL


def test_the_piece_of_a_key_that_a_failure_completes_is_found(
    project: Path, tmp_path: Path
) -> None:
    storage = tmp_path / "store"
    first = _failed(storage, project, f"Exit code 1\nbad header {CORE[0:8]}", index=0)
    assert first == {"suppressOutput": True}  # eight characters: no run yet
    second = _failed(storage, project, f"Exit code 1\nbad header {CORE[8:16]}", index=1)
    _assert_notice(second)
    assert verdict(storage, SESSION) is Verdict.FAIL


@pytest.mark.parametrize(
    "error",
    [
        "Exit code 1\nError: Cannot find module 'express'",
        "Exit code 2\nexpected key format sk-live-xxxxxxxxxxxxxxxx, got none",
        f"Exit code 1\nkey ending in {CORE[-4:]} was revoked",
    ],
    ids=["ordinary", "vendor-prefix", "last-four"],
)
def test_an_ordinary_failure_is_answered_and_judged_as_before(
    project: Path, tmp_path: Path, error: str
) -> None:
    storage = tmp_path / "store"
    assert _failed(storage, project, error) == {"suppressOutput": True}
    (record,) = call_records(storage, SESSION)
    assert record["result"]["status"] == "error" and not record.get("alerts")
    assert verdict(storage, SESSION) is Verdict.PASS
