"""The hook door answers as the host expects: no blanket allow, failures kept, fail closed."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_harness_audit.audit import iter_records
from pytest_harness_audit.cli import main as cli
from pytest_harness_audit.doors import hook as hook_door
from tests.hooks.hook_processes import answer_of

SESSION = "host-contract"


def run(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    storage: Path,
    event: str,
    payload: str,
) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "stdin", io.StringIO(payload))
    code = cli(["--storage", str(storage), "hook", event, "--preset", "safety"])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def payload(event: str, tool: str = "Bash", **fields: Any) -> str:
    body = {
        "hook_event_name": event,
        "session_id": SESSION,
        "tool_name": tool,
        "tool_input": {"command": "ls"},
        "tool_use_id": "toolu_1",
        **fields,
    }
    return json.dumps(body)


def test_an_allowed_call_leaves_the_decision_to_the_host(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(monkeypatch, capsys, tmp_path, "pre", payload("PreToolUse"))
    assert code == 0
    assert answer_of(out) == {}  # never "allow": that would skip the user's permission prompt


def test_a_failed_call_is_recorded_as_an_error_and_clears_its_pending_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run(monkeypatch, capsys, tmp_path, "pre", payload("PreToolUse"))
    failure = payload("PostToolUseFailure", error="Command failed: exit 1", is_interrupt=False)
    code, out, _ = run(monkeypatch, capsys, tmp_path, "post", failure)
    assert code == 0 and answer_of(out) == {"suppressOutput": True}
    (record,) = [r for r in iter_records(tmp_path, SESSION) if r.get("kind", "call") == "call"]
    assert record["result"]["status"] == "error"
    assert record["result"]["errorMessage"] == "Command failed: exit 1"
    assert not list((tmp_path / "pending").rglob("*.json"))


@pytest.mark.parametrize(
    "text",
    [
        "[" * 100_000 + "]" * 100_000,
        '{"session_id": "s", "tool_name": "Bash", "tool_input": '
        + '{"a":' * 50_000
        + "1"
        + "}" * 50_001,
    ],
    ids=["deep-array", "deep-input"],
)
def test_a_hostile_payload_blocks_the_call(
    text: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(monkeypatch, capsys, tmp_path, "pre", text)
    assert code == 2  # the host blocks the call on exit 2
    assert out == "" and err.count("\n") == 1 and "harness-audit: error:" in err


def test_an_internal_error_in_pre_fails_closed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise OSError("disk on fire")

    monkeypatch.setattr(hook_door.Gate, "open", broken)
    code, out, err = run(monkeypatch, capsys, tmp_path, "pre", payload("PreToolUse"))
    assert code == 2 and out == ""
    assert "call refused: OSError: disk on fire" in err


@pytest.mark.parametrize(
    ("text", "line"),
    [
        (
            json.dumps({"hook_event_name": "PostToolUse", "session_id": SESSION}),
            "harness-audit: error: hook payload: field 'tool_name' must be a non-empty string, "
            "got None (recorded as a fault)",
        ),
        (
            json.dumps({"session_id": SESSION, "tool_name": "Bash", "tool_input": [1]}),
            "harness-audit: error: hook payload: field 'tool_input' must be an object, got [1] "
            "(recorded as a fault)",
        ),
    ],
)
def test_a_malformed_post_payload_is_one_line_exit_1_and_a_fault_record(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    text: str,
    line: str,
) -> None:
    code, out, err = run(monkeypatch, capsys, tmp_path, "post", text)
    assert (code, out, err) == (1, "", line + "\n")
    (fault,) = iter_records(tmp_path, SESSION)
    assert fault["kind"] == "note" and fault["result"]["status"] == "error"
    assert fault["result"]["errorMessage"] == line.removeprefix(
        "harness-audit: error: "
    ).removesuffix(" (recorded as a fault)")


@pytest.mark.parametrize(
    "text", ["not json", "[]", json.dumps({"tool_name": "Bash"}), "{" * 100_000]
)
def test_a_post_payload_without_a_session_is_one_line_exit_1_and_no_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    code, out, err = run(monkeypatch, capsys, tmp_path, "post", text)
    assert code == 1 and out == ""
    assert err.startswith("harness-audit: error: hook payload: ") and err.count("\n") == 1
    assert "recorded as a fault" not in err
    assert not (tmp_path / "audit").exists() or not list((tmp_path / "audit").glob("*.jsonl"))
