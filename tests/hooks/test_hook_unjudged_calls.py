"""Calls that reach the host's own permission dialog without a pre step having judged them.

Claude Code goes on with a call whose ``PreToolUse`` hook timed out ("the call continues through
the normal permission flow"), and runs the input another hook's ``updatedInput`` gave it; either
way ``PermissionRequest`` comes with input no pre step judged. ``hook permission-request`` judges
such a call itself: one the policy refuses is denied through the ``decision`` object (the only
answer the host honours there) and recorded as refused, instead of being left to the user's
dialog. A call a pre step judged, and a benign call no pre step judged, still get the dialog.

The host also goes on with a call whose ``pre`` or ``permission-request`` step it cancelled at
its timeout: a step that has not answered by its ``--deadline`` refuses the call itself, and
``hook install`` raises an entry's own ``timeout`` that would end the step before its deadline.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hook_processes import answer_of, hook, host_env

from pytest_harness_audit.audit import iter_records
from pytest_harness_audit.doors.hook_deadline import DEADLINE_S
from pytest_harness_audit.doors.hook_install import install

SESSION = "unjudged-1"


@pytest.fixture
def where(tmp_path: Path) -> tuple[Path, dict[str, str], Path]:
    project = tmp_path / "demo"
    (project / "app").mkdir(parents=True)
    (project / "app" / "main.py").write_text("print('hello')\n")
    (tmp_path / "home").mkdir()
    return tmp_path / "store", host_env(HOME=str(tmp_path / "home")), project


def _event(project: Path, event: str, command: str, **fields: Any) -> dict[str, Any]:
    return {
        "session_id": SESSION,
        "transcript_path": str(project / "t.jsonl"),
        "cwd": str(project),
        "permission_mode": "default",
        "hook_event_name": event,
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "run it"},
        **fields,
    }


def _calls(storage: Path) -> list[dict[str, Any]]:
    return [r for r in iter_records(storage, SESSION) if r["kind"] == "call"]


def test_a_refused_call_no_pre_judged_is_denied_at_the_permission_dialog(
    where: tuple[Path, dict[str, str], Path],
) -> None:
    storage, env, project = where
    request = _event(project, "PermissionRequest", "rm -rf app")
    code, out, err = hook(storage, "permission-request", request, env=env)
    assert code == 0, err
    answer = answer_of(out)["hookSpecificOutput"]
    assert answer["hookEventName"] == "PermissionRequest"
    assert answer["decision"]["behavior"] == "deny"
    assert answer["decision"]["message"].startswith("[blocked] [web4-policy] ")
    (call,) = _calls(storage)
    assert call["result"]["status"] == "blocked"
    assert call["target"] == "rm -rf app"
    assert "rule:deny-destructive-commands" in call["rules"]["constraints"]


def test_a_call_rewritten_after_pre_is_judged_at_the_permission_dialog(
    where: tuple[Path, dict[str, str], Path],
) -> None:
    storage, env, project = where
    code, out, err = hook(
        storage, "pre", _event(project, "PreToolUse", "ls", tool_use_id="toolu_1"), env=env
    )
    assert (code, answer_of(out)) == (0, {}), err
    # another hook's ``updatedInput`` turned the call into one the policy refuses
    code, out, err = hook(
        storage, "permission-request", _event(project, "PermissionRequest", "rm -rf app"), env=env
    )
    assert code == 0, err
    assert answer_of(out)["hookSpecificOutput"]["decision"]["behavior"] == "deny"
    assert [(c["target"], c["result"]["status"]) for c in _calls(storage)] == [
        ("rm -rf app", "blocked")
    ]


@pytest.mark.parametrize("judged_by_pre", [True, False])
def test_an_allowed_call_still_gets_the_host_s_dialog(
    where: tuple[Path, dict[str, str], Path], judged_by_pre: bool
) -> None:
    storage, env, project = where
    if judged_by_pre:
        pre = _event(project, "PreToolUse", "ls -la", tool_use_id="toolu_1")
        code, out, err = hook(storage, "pre", pre, env=env)
        assert (code, answer_of(out)) == (0, {}), err
    code, out, err = hook(
        storage, "permission-request", _event(project, "PermissionRequest", "ls -la"), env=env
    )
    assert (code, answer_of(out)) == (0, {}), err
    assert _calls(storage) == []  # nothing refused: its post records the call if it runs


def _real_hook(
    storage: Path, event: str, payload: dict[str, Any], env: dict[str, str], *options: str
) -> tuple[int, str, str]:
    """One real hook process, given far longer than its deadline (a hang fails the test)."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest_harness_audit", "--storage", str(storage), "hook", event,
         *options],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )  # fmt: skip
    return done.returncode, done.stdout, done.stderr


@pytest.mark.slow  # real hook processes held past their deadline
def test_a_gating_step_that_hangs_refuses_its_call_at_its_deadline(
    where: tuple[Path, dict[str, str], Path],
) -> None:
    storage, env, project = where
    first = _event(project, "PreToolUse", "ls", tool_use_id="toolu_0")
    assert _real_hook(storage, "pre", first, env)[0] == 0
    # something the step waits on does not come (here the session's lock, held elsewhere): the
    # host would cancel the hook at its timeout and run the call unjudged
    (lock,) = storage.rglob(f"{SESSION}.lock")
    holder = os.open(lock, os.O_RDWR)
    fcntl.flock(holder, fcntl.LOCK_EX)
    try:
        _hang_and_refuse(storage, env, project)
    finally:
        os.close(holder)


def _hang_and_refuse(storage: Path, env: dict[str, str], project: Path) -> None:
    pre = _event(project, "PreToolUse", "rm -rf app", tool_use_id="toolu_1")
    started = time.monotonic()
    code, out, err = _real_hook(storage, "pre", pre, env, "--deadline", "1")
    assert (code, out) == (2, "")
    assert err.strip() == "harness-audit: error: hook pre did not answer within 1 s, call refused"
    request = _event(project, "PermissionRequest", "rm -rf app")
    code, out, err = _real_hook(storage, "permission-request", request, env, "--deadline", "1.5")
    assert code == 0, err
    decision = answer_of(out)["hookSpecificOutput"]["decision"]
    assert decision["behavior"] == "deny"
    assert "did not answer within 1.5 s" in decision["message"]
    assert time.monotonic() - started < 30
    assert (project / "app").is_dir()


@pytest.mark.parametrize("value", ["0", "-3", "soon", "inf", "nan"])
def test_a_bad_deadline_refuses_the_call(
    where: tuple[Path, dict[str, str], Path], value: str
) -> None:
    storage, env, project = where
    pre = _event(project, "PreToolUse", "ls", tool_use_id="toolu_1")
    code, out, err = hook(storage, "pre", pre, "--deadline", value, env=env)
    assert (code, out) == (2, "")
    assert "expected a positive number of seconds" in err


def test_install_keeps_the_host_from_cancelling_a_gating_step_before_its_deadline(
    tmp_path: Path,
) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    entries = {
        "PreToolUse": ("harness-audit hook pre --preset safety", 5),
        "PermissionRequest": ("harness-audit hook permission-request --preset safety", 60),
        # nothing left to gate, but a post cancelled before its deadline keeps no stall's fault
        "PostToolUse": ("harness-audit hook post --preset safety", 5),
    }
    settings.write_text(
        json.dumps(
            {
                "hooks": {
                    event: [
                        {
                            "matcher": "*",
                            "hooks": [{"type": "command", "command": cmd, "timeout": given}],
                        }
                    ]
                    for event, (cmd, given) in entries.items()
                }
            }
        )
    )
    install(settings)
    hooks = json.loads(settings.read_text())["hooks"]
    timeouts = {event: hooks[event][0]["hooks"][0].get("timeout") for event in hooks}
    floor = int(DEADLINE_S) + 30
    assert floor < 600  # the host's default, for an entry that sets none
    assert timeouts["PreToolUse"] == floor and timeouts["PermissionRequest"] == floor
    assert timeouts["PostToolUse"] == floor
    assert timeouts["Stop"] is None and timeouts["SessionEnd"] == 30
    # an entry given more, or none (the host's 600 s), is left as it is
    install(settings)
    assert json.loads(settings.read_text())["hooks"] == hooks
