"""A policy file rewritten during a hook session (by a program that built its name at run time).

Each hook event loads ``--policy FILE`` again: a rewritten file let the rest of the session run,
and be judged, under a policy that allows everything. The session's start pins the policy; a
change is a FAIL note and the session goes on under the policy it started with.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_harness_audit.audit import iter_records
from pytest_harness_audit.gate.session_policy import policy_path
from tests.hooks.hook_processes import answer_of, hook

SESSION = "pinned"
SAFE = "name: team\npreset: safety\nrules: []\n"
OPEN = "name: team\nrules: []\ndefaultPolicy: allow\n"


@pytest.fixture
def world(tmp_path: Path) -> tuple[Path, Path, Path]:
    project, storage, policy = tmp_path / "project", tmp_path / "store", tmp_path / "policy.yaml"
    project.mkdir()
    (project / ".env").write_text("API_KEY=sk-live-0123456789abcdef\n")
    policy.write_text(SAFE)
    return project, storage, policy


def _event(
    world: tuple[Path, Path, Path], name: str, subcommand: str, **fields: Any
) -> tuple[int, str, str]:
    project, storage, policy = world
    payload = {"session_id": SESSION, "cwd": str(project), "hook_event_name": name, **fields}
    return hook(storage, subcommand, payload, "--policy", str(policy))


def _read_env(world: tuple[Path, Path, Path], use_id: str) -> tuple[int, str, str]:
    project = world[0]
    call = {"tool_name": "Read", "tool_input": {"file_path": str(project / ".env")}}
    return _event(world, "PreToolUse", "pre", **call, tool_use_id=use_id)


def _notes(storage: Path) -> list[dict[str, Any]]:
    return [r for r in iter_records(storage, SESSION) if r.get("tool") == "PolicyChanged"]


def test_a_policy_rewritten_mid_session_is_noted_and_the_pinned_one_still_judges(
    world: tuple[Path, Path, Path],
) -> None:
    _project, storage, policy = world
    assert _event(world, "SessionStart", "session-start", source="startup")[0] == 0
    policy.write_text(OPEN)  # what the agent's inline code did
    code, out, _err = _read_env(world, "toolu_1")
    assert code == 0
    assert answer_of(out)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert _read_env(world, "toolu_2")[0] == 0
    (note,) = _notes(storage)  # once per new policy, not per event
    assert note["result"]["status"] == "error"
    assert set(note["policyChange"]) == {"pinned", "now"}
    code, _out, err = _event(world, "SessionEnd", "session-end", reason="exit")
    assert code == 0 and "verdict FAIL" in err
    report = (storage / "reports" / f"{SESSION}.yaml").read_text(encoding="utf-8")
    assert "PolicyChanged" in report


def test_with_the_pinned_copy_gone_too_a_call_is_refused(
    world: tuple[Path, Path, Path],
) -> None:
    _project, storage, policy = world
    assert _event(world, "SessionStart", "session-start", source="startup")[0] == 0
    policy.write_text(OPEN)
    policy_path(storage, SESSION).unlink()
    code, out, err = _read_env(world, "toolu_1")
    assert code == 2 and out == ""
    assert "the policy changed since session" in err and "call refused" in err
    assert "Traceback" not in err
    assert len(_notes(storage)) == 1


def test_an_unchanged_policy_and_a_resumed_session_note_nothing(
    world: tuple[Path, Path, Path],
) -> None:
    _project, storage, policy = world
    assert _event(world, "SessionStart", "session-start", source="startup")[0] == 0
    policy.write_text(SAFE + "# a comment changes no rule\n")
    assert _read_env(world, "toolu_1")[0] == 0
    assert _event(world, "SessionEnd", "session-end", reason="exit")[0] == 0
    policy.write_text(OPEN)  # the user's own change, between runs of the session
    assert _event(world, "SessionStart", "session-start", source="resume")[0] == 0
    code, out, _err = _read_env(world, "toolu_2")
    assert code == 0 and answer_of(out) == {}  # the new run's policy allows it
    assert _notes(storage) == []
