"""The hook door against the host's hooks reference, process by process: input fields it does
not know are tolerated, pre fails closed on bad input, an allowed call never answers ``allow``
(which would skip the host's own prompt), a failed ``PermissionRequest`` denies through the
``decision`` object (the host ignores exit code 2 there), and ``SessionEnd`` gets the time it
needs (the host gives its hooks 1.5 s unless an entry asks for more)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hook_processes import answer_of, harness_audit, hook, host_env

SESSION = "conformance-1"
#: Fields a newer host may send that the door does not use.
NEW_FIELDS: dict[str, Any] = {
    "prompt_id": "550e8400-e29b-41d4-a716-446655440000",
    "effort": {"level": "xhigh"},
    "permission_mode": "auto",
    "agent_type": "Explore",
    "a_field_from_the_future": {"nested": [1, {"x": None}]},
}


@pytest.fixture
def where(tmp_path: Path) -> tuple[Path, dict[str, str], Path]:
    project = tmp_path / "demo"
    project.mkdir()
    (tmp_path / "home").mkdir()
    return tmp_path / "store", host_env(HOME=str(tmp_path / "home")), project


def _base(project: Path, event: str) -> dict[str, Any]:
    return {
        "session_id": SESSION,
        "transcript_path": str(project / "t.jsonl"),
        "cwd": str(project),
        "hook_event_name": event,
        **NEW_FIELDS,
    }


READ = {"tool_name": "Read", "tool_input": {"file_path": "notes.txt"}, "tool_use_id": "toolu_c1"}


def test_every_event_tolerates_fields_it_does_not_know(
    where: tuple[Path, dict[str, str], Path],
) -> None:
    storage, env, project = where
    read = {**READ, "tool_input": {"file_path": str(project / "notes.txt")}}
    steps: list[tuple[str, dict[str, Any], Any]] = [
        ("session-start", {**_base(project, "SessionStart"), "source": "startup"}, ""),
        ("pre", {**_base(project, "PreToolUse"), **read}, {}),
        (
            "permission-request",
            {
                **_base(project, "PermissionRequest"),
                "tool_name": read["tool_name"],
                "tool_input": read["tool_input"],
                "permission_suggestions": [{"type": "addRules", "rules": [], "behavior": "allow"}],
            },
            {},
        ),
        (
            "post",
            {**_base(project, "PostToolUse"), **read, "tool_response": {}, "duration_ms": 12},
            {"suppressOutput": True},
        ),
        (
            "post",
            {
                **_base(project, "PostToolUseFailure"),
                **read,
                "tool_use_id": "toolu_c2",
                "error": "Exit code 1",
                "is_interrupt": False,
                "duration_ms": 3,
            },
            {"suppressOutput": True},
        ),
        (
            "permission-denied",
            {**_base(project, "PermissionDenied"), **read, "tool_use_id": "toolu_c3"}
            | {"reason": "Blocked by classifier"},
            {"hookSpecificOutput": {"hookEventName": "PermissionDenied", "retry": False}},
        ),
        (
            "stop",
            {
                **_base(project, "Stop"),
                "stop_hook_active": False,
                "last_assistant_message": "done",
                "background_tasks": [],
                "session_crons": [],
            },
            "",
        ),
        ("session-end", {**_base(project, "SessionEnd"), "reason": "other"}, ""),
    ]
    for command, payload, answer in steps:
        code, out, err = hook(storage, command, payload, env=env)
        assert code == 0, (command, err)
        assert (answer_of(out) if out else "") == answer, command


@pytest.mark.parametrize(
    "text",
    [
        "",
        "[]",
        "{broken",
        "[" * 100_000,
        json.dumps({"session_id": SESSION, "hook_event_name": "PreToolUse"}),
        json.dumps({**READ, "session_id": SESSION, "tool_input": None}),
        json.dumps({**READ, "session_id": SESSION, "hook_event_name": "PreToolUseV2"}),
        json.dumps({**READ, "session_id": ""}),
    ],
    ids=[
        "empty",
        "array",
        "broken",
        "deep",
        "no-tool",
        "null-input",
        "unknown-event",
        "no-session",
    ],
)
def test_pre_fails_closed_on_bad_input(where: tuple[Path, dict[str, str], Path], text: str) -> None:
    storage, env, _project = where
    code, out, err = hook(storage, "pre", text, env=env)
    assert (code, out) == (2, "")  # exit 2 blocks the call; stdout is not read then
    assert len(err.splitlines()) == 1 and err.startswith("harness-audit: error: ")
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("tool", "tool_input", "options", "answer"),
    [
        ("Read", {"file_path": "notes.txt"}, (), {}),
        ("Bash", {"command": "ls"}, (), {}),
        ("Bash", {"command": "ls"}, ("--approve-allowed",), "allow"),
        ("AskUserQuestion", {"questions": []}, ("--approve-allowed",), {}),
        ("ExitPlanMode", {"plan": "1. do it"}, ("--approve-allowed",), {}),
    ],
    ids=["read", "bash", "bash-approved", "ask-user-question", "exit-plan-mode"],
)
def test_an_allowed_call_leaves_the_host_s_prompt_alone(
    where: tuple[Path, dict[str, str], Path],
    tool: str,
    tool_input: dict[str, Any],
    options: tuple[str, ...],
    answer: Any,
) -> None:
    storage, env, project = where
    payload = {**_base(project, "PreToolUse"), "tool_name": tool, "tool_input": tool_input}
    code, out, err = hook(storage, "pre", {**payload, "tool_use_id": "toolu_a"}, *options, env=env)
    assert code == 0, err
    if answer == "allow":  # opt-in only, and never for a tool that asks the user something
        assert answer_of(out)["hookSpecificOutput"]["permissionDecision"] == "allow"
    else:
        assert answer_of(out) == answer


def test_a_failed_permission_request_denies_through_the_decision(
    where: tuple[Path, dict[str, str], Path],
) -> None:
    storage, env, project = where
    payload = {**_base(project, "PermissionRequest"), **READ}
    code, out, err = hook(
        storage, "permission-request", payload, "--policy", str(project / "none.yaml"), env=env
    )
    assert code == 0  # exit 2 would leave the dialog up: only the decision object denies
    decision = answer_of(out)["hookSpecificOutput"]
    assert decision["hookEventName"] == "PermissionRequest"
    assert decision["decision"]["behavior"] == "deny"
    assert "none.yaml" in decision["decision"]["message"]
    assert len(err.splitlines()) == 1


def _session_end_entry(settings: Path) -> dict[str, Any]:
    groups = json.loads(settings.read_text())["hooks"]["SessionEnd"]
    (entry,) = [e for g in groups for e in g["hooks"] if "session-end" in e["command"]]
    return entry


@pytest.mark.parametrize(("given", "kept"), [(None, 30), (5, 30), (60, 60)])
def test_install_gives_session_end_the_time_it_needs(
    where: tuple[Path, dict[str, str], Path], given: int | None, kept: int
) -> None:
    _storage, env, project = where
    settings = project / ".claude" / "settings.json"
    if given is not None:
        entry = {"type": "command", "command": "harness-audit hook session-end", "timeout": given}
        settings.parent.mkdir()
        settings.write_text(json.dumps({"hooks": {"SessionEnd": [{"hooks": [entry]}]}}))
    code, _out, err = harness_audit(["hook", "install", "--dir", str(project)], env=env)
    assert code == 0, err
    assert _session_end_entry(settings)["timeout"] == kept
    groups = json.loads(settings.read_text())["hooks"]
    others = [
        e for event, g in groups.items() if event != "SessionEnd" for x in g for e in x["hooks"]
    ]
    assert all("timeout" not in e for e in others)  # the host's 600 s default is plenty
