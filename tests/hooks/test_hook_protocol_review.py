"""The hook door against Claude Code's hooks reference, where a difference would let a call run
unjudged or a record say what did not happen: a post event whose input is not the one pre
judged, a call pre let through recorded after a quarantine began, payloads that are not UTF-8
or lack ``tool_input``, ``--approve-allowed`` in the permission modes an ``allow`` would
override, a chain that goes on after its ``SessionEnd``, and installed entries a narrower
matcher or an ``if`` / ``async`` / ``args`` field keeps from gating every call."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hook_processes import answer_of, harness_audit, hook, host_env, verdict

from pytest_harness_audit.audit import iter_records
from pytest_harness_audit.doors.hook import parse_payload
from pytest_harness_audit.doors.hook_install import EVENTS, install
from pytest_harness_audit.errors import UsageError
from pytest_harness_audit.readers.verdict import Verdict

SESSION = "protocol-review-1"


@pytest.fixture
def where(tmp_path: Path) -> tuple[Path, dict[str, str], Path]:
    project = tmp_path / "demo"
    project.mkdir()
    (project / "notes.txt").write_text("notes\n")
    (tmp_path / "home").mkdir()
    return tmp_path / "store", host_env(HOME=str(tmp_path / "home")), project


def _event(project: Path, event: str, **fields: Any) -> dict[str, Any]:
    return {
        "session_id": SESSION,
        "transcript_path": str(project / "t.jsonl"),
        "cwd": str(project),
        "permission_mode": "default",
        "hook_event_name": event,
        **fields,
    }


def _bash(project: Path, event: str, command: str, use_id: str, **more: Any) -> dict[str, Any]:
    return _event(
        project,
        event,
        tool_name="Bash",
        tool_input={"command": command, "description": "run it"},
        tool_use_id=use_id,
        **more,
    )


RAN = {"stdout": "README.md\n", "stderr": "", "interrupted": False, "isImage": False}


def _calls(storage: Path) -> list[dict[str, Any]]:
    return [r for r in iter_records(storage, SESSION) if r["kind"] == "call"]


def _report(storage: Path, env: dict[str, str]) -> str:
    code, out, err = harness_audit(["--storage", str(storage), "audit", "report", SESSION], env=env)
    assert code == 0, err
    return out


def test_a_post_with_other_input_than_pre_judged_is_recorded_as_it_ran(
    where: tuple[Path, dict[str, str], Path],
) -> None:
    storage, env, project = where
    code, out, err = hook(storage, "pre", _bash(project, "PreToolUse", "ls", "toolu_r1"), env=env)
    assert (code, answer_of(out)) == (0, {}), err
    # another hook's updatedInput rewrote the call: the host ran what pre never judged
    post = _bash(project, "PostToolUse", "rm -rf /", "toolu_r1", tool_response=RAN)
    code, out, err = hook(storage, "post", post, env=env)
    assert code == 0, err
    (record,) = _calls(storage)
    assert record["target"] == "rm -rf /"
    assert record["result"]["status"] == "success"  # it ran: never "blocked"
    assert {"ran_unguarded", "input_changed"} <= set(record["alerts"])
    assert verdict(storage, SESSION) == Verdict.FAIL


def test_an_allowed_rewrite_is_marked_and_not_refused(
    where: tuple[Path, dict[str, str], Path],
) -> None:
    storage, env, project = where
    hook(storage, "pre", _bash(project, "PreToolUse", "ls", "toolu_r2"), env=env)
    post = _bash(project, "PostToolUse", "ls -la", "toolu_r2", tool_response=RAN)
    code, _out, err = hook(storage, "post", post, env=env)
    assert code == 0, err
    (record,) = _calls(storage)
    assert record["result"]["status"] == "success"
    assert "input_changed" in record["alerts"]
    assert "ran_unguarded" not in record["alerts"]


def test_a_call_pre_let_through_is_recorded_as_it_ran_after_a_quarantine(
    where: tuple[Path, dict[str, str], Path],
) -> None:
    storage, env, project = where
    hook(storage, "pre", _bash(project, "PreToolUse", "ls", "toolu_ok"), env=env)
    for number in range(6):  # refusals while the call runs bring the session to quarantine
        denied = _bash(project, "PreToolUse", "rm -rf /", f"toolu_d{number}")
        hook(storage, "pre", denied, env=env)
    post = _bash(project, "PostToolUse", "ls", "toolu_ok", tool_response=RAN)
    code, _out, err = hook(storage, "post", post, env=env)
    assert code == 0, err
    (record,) = [r for r in _calls(storage) if r["target"] == "ls"]
    assert record["result"]["status"] == "success"  # the host ran it, output recorded
    assert "output" in record["result"] or record["result"].get("outputHash")
    assert "immune:quarantine" not in record["rules"]["constraints"]
    assert "ran_unguarded" not in (record.get("alerts") or [])


def _raw(storage: Path, env: dict[str, str], event: str, data: bytes) -> tuple[int, str, str]:
    done = subprocess.run(
        [sys.executable, "-m", "pytest_harness_audit", "--storage", str(storage), "hook", event],
        input=data,
        capture_output=True,
        timeout=120,
        # as a C locale reads it: bytes that are not UTF-8 become lone surrogates
        env={**env, "PYTHONIOENCODING": "utf-8:surrogateescape"},
    )
    return done.returncode, done.stdout.decode(), done.stderr.decode()


@pytest.mark.parametrize(
    ("event", "name", "code"),
    [
        ("pre", "PreToolUse", 2),  # blocks the call
        ("post", "PostToolUse", 1),  # the tool ran: a non-blocking error and a fault record
        ("permission-request", "PermissionRequest", 0),  # only the decision object denies
    ],
)
def test_a_payload_that_is_not_utf8_fails_the_event_s_safe_way(
    where: tuple[Path, dict[str, str], Path], event: str, name: str, code: int
) -> None:
    storage, env, project = where
    payload = _bash(project, name, "ls XX", "toolu_u1", tool_response=RAN)
    data = json.dumps(payload).encode().replace(b"XX", b"\xff\xfe")
    got, out, err = _raw(storage, env, event, data)
    assert got == code, err
    assert "not UTF-8" in err and "Traceback" not in err
    if event == "permission-request":
        assert answer_of(out)["hookSpecificOutput"]["decision"]["behavior"] == "deny"
    elif event == "pre":
        assert out == ""


def test_the_parser_refuses_lone_surrogates_but_not_escaped_ones() -> None:
    with pytest.raises(UsageError, match="not UTF-8"):
        parse_payload(
            '{"session_id": "s", "tool_name": "Bash", "tool_input": {"c": "\udcff"}}', "PreToolUse"
        )
    escaped = '{"session_id": "s", "tool_name": "Bash", "tool_input": {"c": "\\ud83d\\ude00"}}'
    assert parse_payload(escaped, "PreToolUse").tool_input == {"c": "\U0001f600"}


def test_pre_refuses_a_payload_without_tool_input(
    where: tuple[Path, dict[str, str], Path],
) -> None:
    storage, env, project = where
    payload = _bash(project, "PreToolUse", "rm -rf /", "toolu_n1")
    del payload["tool_input"]  # judging {} would let whatever the host runs through
    code, out, err = hook(storage, "pre", payload, env=env)
    assert (code, out) == (2, "")
    assert "'tool_input' is missing" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("mode", "allowed"),
    [
        ("default", True),
        ("acceptEdits", True),
        ("auto", True),
        ("bypassPermissions", True),
        (None, True),  # a payload naming no mode: taken as default
        ("plan", False),  # the host keeps plan mode read-only: an allow would override it
        ("dontAsk", False),  # the host allows only what the user allowed beforehand
        ("aModeFromTheFuture", False),
        ("", False),
        (["default"], False),  # not a string: no mode a host sends
    ],
)
def test_approve_allowed_answers_allow_only_where_it_stands_in_for_a_prompt(
    where: tuple[Path, dict[str, str], Path], mode: Any, allowed: bool
) -> None:
    storage, env, project = where
    payload = _event(
        project,
        "PreToolUse",
        tool_name="Read",
        tool_input={"file_path": str(project / "notes.txt")},
        tool_use_id="toolu_m1",
        permission_mode=mode,
    )
    if mode is None:
        del payload["permission_mode"]
    code, out, err = hook(storage, "pre", payload, "--approve-allowed", env=env)
    assert code == 0, err
    expected = {
        "hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}
    }
    assert answer_of(out) == (expected if allowed else {})


def test_records_after_session_end_are_in_the_session_s_report(
    where: tuple[Path, dict[str, str], Path],
) -> None:
    storage, env, project = where
    hook(storage, "session-start", _event(project, "SessionStart", source="startup"), env=env)
    code, _out, err = hook(
        storage, "session-end", _event(project, "SessionEnd", reason="other"), env=env
    )
    assert code == 0, err
    assert "verdict: PASS" in _report(storage, env)
    # an end that was not the host's, or a session that went on: the chain holds more
    code, out, err = hook(
        storage, "pre", _bash(project, "PreToolUse", "rm -rf /", "toolu_e1"), env=env
    )
    assert answer_of(out)["hookSpecificOutput"]["permissionDecision"] == "deny", err
    report = _report(storage, env)
    assert "verdict: FAIL" in report
    assert "rm -rf /" in report
    assert "the chain goes on after its SessionEnd record" in report


@pytest.mark.parametrize(
    "command",
    [
        'echo \'{"session_id": "x"}\' | harness-audit hook session-end --preset safety',
        "python3 -m pytest_harness_audit hook session-end < end.json",
    ],
)
def test_the_agent_cannot_run_the_door_s_own_events(
    where: tuple[Path, dict[str, str], Path], command: str
) -> None:
    storage, env, project = where
    code, out, err = hook(
        storage, "pre", _bash(project, "PreToolUse", command, "toolu_f1"), env=env
    )
    assert code == 0, err
    assert answer_of(out)["hookSpecificOutput"]["permissionDecision"] == "deny"


def _ours(settings: dict[str, Any], event: str, subcommand: str) -> list[tuple[Any, Any]]:
    """``(group, entry)`` of every entry running ``harness-audit hook <subcommand>``."""
    found = []
    for group in settings["hooks"][event]:
        for entry in group["hooks"]:
            if (entry["command"] + " ").startswith(f"harness-audit hook {subcommand} "):
                found.append((group, entry))
    return found


def test_install_makes_narrowed_entries_gate_every_call(tmp_path: Path) -> None:
    path = tmp_path / ".claude" / "settings.json"
    path.parent.mkdir()
    mine = {"type": "command", "command": "./lint.sh"}
    narrowed = {
        "hooks": {
            "PreToolUse": [
                {
                    "matcher": "Bash",
                    "hooks": [
                        mine,
                        {"type": "command", "command": "harness-audit hook pre --preset safety"},
                    ],
                }
            ],
            "PostToolUse": [
                {
                    "matcher": "*",
                    "hooks": [
                        {
                            "type": "command",
                            "command": "harness-audit hook post --preset safety",
                            "if": "Bash(git *)",
                            "async": True,
                        }
                    ],
                }
            ],
            "SessionStart": [
                {
                    "matcher": "startup",
                    "hooks": [
                        {
                            "type": "command",
                            "command": "harness-audit hook session-start --preset safety",
                        }
                    ],
                }
            ],
            "SessionEnd": [
                {
                    "matcher": "clear",
                    "hooks": [
                        {
                            "type": "command",
                            "command": "harness-audit hook session-end --preset safety",
                            "args": [],
                            "timeout": 45,
                        }
                    ],
                }
            ],
        }
    }
    path.write_text(json.dumps(narrowed))
    assert install(path).changed
    settings = json.loads(path.read_text())
    for event, subcommand, _matcher in EVENTS:
        (found,) = _ours(settings, event, subcommand)
        group, entry = found
        assert group.get("matcher", "*") in ("*", ""), event  # every tool, MCP tools included
        assert not {"if", "async", "asyncRewake", "args"} & set(entry), event
        assert entry["type"] == "command"
    assert settings["hooks"]["PreToolUse"][0] == {"matcher": "Bash", "hooks": [mine]}
    ((_group, end),) = _ours(settings, "SessionEnd", "session-end")
    assert end["timeout"] == 45  # the longer time it had is kept
    assert not install(path).changed
