"""The mark every ``pre`` answer leaves in the host's transcript, and how it is read back.

Claude Code keeps a ``PreToolUse`` hook's ``additionalContext`` in the session's transcript as
an ``attachment`` line of its own; the door reads only such lines, so a tool's output or the
model's text quoting the mark is no mark.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytest_harness_audit.doors.hook_marks import DOOR_MARK, marked, marked_calls
from tests.hooks.hook_processes import hook, host_env

SESSION = "2b7d0c1e-1f3a-4d5e-8a9b-0c1d2e3f4a5b"


def _pre(tmp_path: Path, command: str) -> dict[str, Any]:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    payload = {
        "session_id": SESSION,
        "cwd": str(project),
        "hook_event_name": "PreToolUse",
        "permission_mode": "default",
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "run"},
        "tool_use_id": "toolu_01mark",
    }
    env = host_env(HOME=str(tmp_path / "home"))
    code, out, err = hook(tmp_path / "store", "pre", payload, "--preset", "safety", env=env)
    assert code == 0, err
    answer: dict[str, Any] = json.loads(out)
    return answer


def test_an_allowed_call_gets_the_mark_alone(tmp_path: Path) -> None:
    """No decision (the host's own rules and prompts apply), only the context."""
    assert _pre(tmp_path, "ls -la") == {
        "hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": DOOR_MARK}
    }


def test_a_refusal_keeps_its_decision_and_reason(tmp_path: Path) -> None:
    specific = _pre(tmp_path, "cat ~/.ssh/id_rsa")["hookSpecificOutput"]
    assert specific["permissionDecision"] == "deny"
    assert specific["permissionDecisionReason"].startswith("[blocked] [web4-")
    assert specific["additionalContext"] == DOOR_MARK


def test_a_warning_keeps_its_context_before_the_mark() -> None:
    warned = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": "w"}}
    assert marked(warned)["hookSpecificOutput"]["additionalContext"] == f"w\n{DOOR_MARK}"
    assert marked({"systemMessage": "s"}) == {
        "systemMessage": "s",
        "hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": DOOR_MARK},
    }


def _line(data: dict[str, Any], session: str = SESSION) -> str:
    return json.dumps({"sessionId": session, **data}) + "\n"


def _attachment(kind: str, event: str, use_id: str, **held: Any) -> dict[str, Any]:
    return {
        "type": "attachment",
        "attachment": {"type": kind, "hookEvent": event, "toolUseID": use_id, **held},
    }


def test_only_the_hosts_attachment_lines_are_marks(tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    quoted = {"type": "tool_result", "tool_use_id": "toolu_q", "content": DOOR_MARK}
    lines = [
        _line(_attachment("hook_additional_context", "PreToolUse", "toolu_a", content=[DOOR_MARK])),
        _line(_attachment("hook_success", "PreToolUse", "toolu_b", stdout=f'"{DOOR_MARK}"')),
        # quoted by a call's output, by the model, by another event, another session
        _line({"type": "user", "message": {"role": "user", "content": [quoted]}}),
        _line({"type": "assistant", "message": {"content": [{"type": "text", "text": DOOR_MARK}]}}),
        _line(
            _attachment("hook_additional_context", "PostToolUse", "toolu_c", content=[DOOR_MARK])
        ),
        _line(
            _attachment("hook_additional_context", "PreToolUse", "toolu_d", content=[DOOR_MARK]),
            session="another",
        ),
        _line(_attachment("hook_additional_context", "PreToolUse", "toolu_e", content=["other"])),
    ]
    transcript.write_text("".join(lines), encoding="utf-8")
    assert marked_calls(str(transcript), SESSION) == ("toolu_a", "toolu_b")
    assert marked_calls(str(transcript), SESSION, upto=len(lines[0])) == ("toolu_a",)
    assert marked_calls(None, SESSION) == ()
    assert marked_calls(str(tmp_path / "missing.jsonl"), SESSION) == ()
