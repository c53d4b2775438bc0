"""Attacks on the audit store through a path whose start only the run knows.

``$(dirname "$PWD")/audit/audit/<session>.jsonl`` names the chain, but the reading cannot
evaluate ``$(dirname …)``: it keeps ``$(…)/audit/audit/<session>.jsonl``. Such a path used to be
let through — the chain truncated (the next append then raised), the anchor overwritten (the next
append rewrote it, and the session was judged PASS). Its known tail is now matched against the
store's last directories and what exists in it. A name built whole at run time stays a documented
limit (see docs/security.md).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_harness_audit.audit import verify_chain
from pytest_harness_audit.session.harness import Harness
from tests.hooks.hook_processes import hook


@pytest.fixture
def harness(store_session: Harness) -> Harness:
    """The shared permissive session, its store holding a chain (tests/conftest.py)."""
    return store_session


ATTACKS = [
    ': > "$(dirname "$PWD")"/audit/audit/SID.jsonl',
    "cat `dirname $PWD`/audit/sessions/SID.anchor",
    "F=$(dirname $PWD); echo > ${F}/audit/sessions/SID.anchor",
    'd=$(cd .. && pwd); : > "$d"/audit/audit/SID.jsonl',
    'ln -s "$(dirname $PWD)"/audit/audit l3; : > l3/SID.jsonl',
    'ln -sf "$(dirname "$PWD")"/audit up',
    'truncate -s0 "$(cd .. && pwd)"/audit/audit/*.jsonl',
    'rm -f "$(dirname $PWD)"/audit/sessions/SID.json',
    'cp /dev/null "${PWD%/*}"/audit/audit/SID.jsonl',
]


@pytest.mark.parametrize("command", ATTACKS)
def test_a_run_time_prefix_does_not_hide_the_store(harness: Harness, command: str) -> None:
    anchor = harness.storage_dir / "sessions" / f"{harness.session_id}.anchor"
    before = anchor.read_bytes()
    result = harness.call("Bash", command=command.replace("SID", harness.session_id))
    assert result.status == "blocked", result.error_message
    assert result.evaluation.rule_id == "protect-audit-store"
    assert not (harness.root / "l3").exists() and not (harness.root / "up").exists()
    report = verify_chain(harness.storage_dir, harness.session_id, witness=harness.chain.witness)
    assert report.valid and report.record_count == 2
    assert anchor.read_bytes() != b"\n" and len(anchor.read_bytes()) == len(before)
    assert harness.verdict == "FAIL"


BENIGN = [
    'echo hi > "$TMPDIR"/audit.txt',
    'ls "$(dirname "$PWD")"',
    'cat "$(git rev-parse --show-toplevel)"/README.md',
    'mkdir -p "$PWD"/out/reports && echo ok > "$PWD"/out/reports/log.txt',
    'echo "$(date)" > notes-audit.txt',
    'for f in app/*.py; do wc -l "$f"; done',
]


@pytest.mark.parametrize("command", BENIGN)
def test_run_time_paths_elsewhere_are_not_tampering(harness: Harness, command: str) -> None:
    result = harness.call("Bash", command=command)
    assert "tamper_attempt" not in result.record.get("alerts", []), result.error_message
    assert result.status == "success", result.error_message
    assert harness.verdict == "PASS"


@pytest.mark.slow
def test_the_hook_door_denies_a_run_time_prefix(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    store = tmp_path / "state"
    payload = {
        "hook_event_name": "PreToolUse",
        "session_id": "S",
        "cwd": str(project),
        "tool_use_id": "t1",
        "tool_name": "Bash",
        "tool_input": {"command": ': > "$(dirname "$PWD")"/state/audit/S.jsonl'},
    }
    assert hook(store, "session-start", {**payload, "hook_event_name": "SessionStart"})[0] == 0
    code, out, err = hook(store, "pre", payload, "--preset", "permissive")
    assert code == 0, err
    answer = json.loads(out)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny"
    assert "audit store" in answer["permissionDecisionReason"]
