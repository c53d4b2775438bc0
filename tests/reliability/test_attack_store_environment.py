"""Attacks on the audit store through a variable of the agent's own shell.

A host's hooks find the store through ``$HARNESS_AUDIT_DIR``, and the agent's shell has the same
environment, so ``: > "$HARNESS_AUDIT_DIR"/audit/S.jsonl`` names the chain with no spelling of its
path. The reading leaves ``$HARNESS_AUDIT_DIR/…`` (it does not know the value); the store rule
now puts in the values its own process has — the hook process runs in the host's environment.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_harness_audit.audit import verify_chain
from pytest_harness_audit.gate.store_guard import StoreGuard
from pytest_harness_audit.policy.policy import Policy
from tests.hooks.hook_processes import hook, host_env

ATTACKS = [
    ': > "$HARNESS_AUDIT_DIR"/audit/S.jsonl',
    "truncate -s0 ${HARNESS_AUDIT_DIR}/audit/S.jsonl",
    "rm -rf ${HARNESS_AUDIT_DIR}",
    'rm "$HARNESS_AUDIT_DIR/sessions/S.anchor"',
    "cat ${HARNESS_AUDIT_DIR:-/nowhere}/audit/S.jsonl",
    'cd "$HARNESS_AUDIT_DIR" && : > audit/S.jsonl',
    'ln -s "$HARNESS_AUDIT_DIR" ev && : > ev/audit/S.jsonl',
    "cp /dev/null $EVIDENCE/audit/S.jsonl",
]
BENIGN = [
    'echo "$HOME" > home.txt',
    "ls $HOME",
    'cat "$HOME/notes.txt"',
    'echo "$PATH" | tr : "\\n" | head -3',
    'mkdir -p "$TMPDIR/build" && echo ok',
]


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    store = tmp_path / "state" / "harness-audit"
    monkeypatch.setenv("HARNESS_AUDIT_DIR", str(store))
    monkeypatch.setenv("EVIDENCE", str(store))
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    return store


@pytest.mark.parametrize("command", ATTACKS)
def test_a_variable_naming_the_store_is_read_as_its_value(
    env: Path, tmp_path: Path, command: str
) -> None:
    guard = StoreGuard(env, str(tmp_path / "project"))
    evaluation = Policy.preset("permissive").evaluate(
        "Bash", {"command": command}, root=str(tmp_path / "project")
    )
    assert guard.offending(evaluation.targets, {"command": command}) is not None


@pytest.mark.parametrize("command", BENIGN)
def test_other_variables_are_ordinary(env: Path, tmp_path: Path, command: str) -> None:
    guard = StoreGuard(env, str(tmp_path / "project"))
    evaluation = Policy.preset("permissive").evaluate(
        "Bash", {"command": command}, root=str(tmp_path / "project")
    )
    assert guard.offending(evaluation.targets, {"command": command}) is None


@pytest.mark.slow
def test_the_hook_door_denies_through_the_host_s_variable(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    store = tmp_path / "state"
    environment = host_env(HARNESS_AUDIT_DIR=str(store))
    base = {"session_id": "S", "cwd": str(project), "tool_name": "Bash"}
    start = {**base, "hook_event_name": "SessionStart", "source": "startup"}
    # every event of the session under the same policy, as `hook install` writes them
    assert hook(store, "session-start", start, "--preset", "permissive", env=environment)[0] == 0
    for number, command in enumerate(['truncate -s0 "$HARNESS_AUDIT_DIR"/audit/S.jsonl', "ls"]):
        payload = {
            **base,
            "hook_event_name": "PreToolUse",
            "tool_use_id": f"t{number}",
            "tool_input": {"command": command},
        }
        code, out, err = hook(store, "pre", payload, "--preset", "permissive", env=environment)
        assert code == 0, err
        decision = json.loads(out).get("hookSpecificOutput", {}).get("permissionDecision")
        assert decision == ("deny" if number == 0 else None), (command, out)
    report = verify_chain(store, "S")
    assert report.valid and report.record_count == 2
