"""In the host's ``dontAsk`` mode an ask is a refusal: recorded at once, by that mode; a
subagent's asks left without an outcome are recorded when that subagent stops.

The host never prompts in ``dontAsk`` mode: a call a hook answers ``ask`` for is refused, with no
event after it. ``hook pre`` still answers ``ask`` (the host's own semantics decide), and records
the call as not run at once, ``reject`` by ``host:dontAsk``, rather than leaving it to be taken
for the user's refusal at the next event. Each step is a real ``harness-audit hook`` process.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_harness_audit.readers.verdict import Verdict
from tests.hooks.hook_processes import call_records, verdict
from tests.hooks.test_hook_asks import (
    REFUSED,
    SESSION,
    WARN_POLICY,
    deploy_write,
    post,
    read,
    records_of,
    step,
    stop,
)

NEVER_ASKED = "the host's dontAsk permission mode refuses every call it would ask about"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "work" / "deploy").mkdir(parents=True)
    return tmp_path / "work"


@pytest.fixture
def policy_file(tmp_path: Path) -> Path:
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(WARN_POLICY))
    return path


def test_an_ask_in_dont_ask_mode_is_recorded_at_once_as_that_modes_refusal(
    tmp_path: Path, policy_file: Path, project: Path
) -> None:
    storage = tmp_path / "audit"
    payload = {**deploy_write(project, "toolu_d1"), "permission_mode": "dontAsk"}
    _, out = step(storage, "pre", payload, policy_file)
    assert json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "ask"
    [write] = call_records(storage, SESSION)  # no later event is needed
    assert write["result"]["status"] == "blocked"
    assert write["approval"] == {
        "approver": "host:dontAsk",
        "outcome": "reject",
        "reason": f"{NEVER_ASKED}; recorded at PreToolUse",
    }
    # the next events find nothing more to settle: one outcome for the one call
    step(storage, "pre", {**read(project, "toolu_d2"), "permission_mode": "dontAsk"}, policy_file)
    step(storage, "stop", stop(project), policy_file)
    assert len(records_of(storage, "Write")) == 1
    assert verdict(storage, SESSION) == Verdict.WARN  # a rejected approval, as at a prompt


def test_a_host_that_runs_it_after_all_supersedes_the_record(
    tmp_path: Path, policy_file: Path, project: Path
) -> None:
    storage = tmp_path / "audit"
    payload = {**deploy_write(project, "toolu_d3"), "permission_mode": "dontAsk"}
    step(storage, "pre", payload, policy_file)
    (project / "deploy" / "app.yaml").write_text("replicas: 3\n")
    step(storage, "post", post(payload, {"type": "create"}), policy_file)
    refused, ran = records_of(storage, "Write")
    assert refused["approval"]["approver"] == "host:dontAsk"
    assert ran["result"]["status"] == "success"
    assert ran["approval"]["supersedes"] == refused["recordId"]


def test_an_ask_in_another_mode_still_waits_for_the_user(
    tmp_path: Path, policy_file: Path, project: Path
) -> None:
    storage = tmp_path / "audit"
    step(storage, "pre", deploy_write(project, "toolu_d4"), policy_file)
    assert call_records(storage, SESSION) == []  # the user is being asked
    step(storage, "stop", stop(project), policy_file)
    [write] = records_of(storage, "Write")
    assert write["approval"]["approver"] == "host"
    assert write["approval"]["reason"] == f"{REFUSED}; reconciled at Stop"


def test_a_subagents_refused_ask_is_recorded_when_that_subagent_stops(
    tmp_path: Path, policy_file: Path, project: Path
) -> None:
    storage = tmp_path / "audit"
    step(storage, "pre", deploy_write(project, "toolu_s1", agent="sub-1"), policy_file)
    step(storage, "pre", deploy_write(project, "toolu_s2", agent="sub-2"), policy_file)
    ended = {**stop(project), "hook_event_name": "SubagentStop", "agent_id": "sub-1"}
    ended["agent_type"] = "Explore"
    step(storage, "subagent-stop", ended, policy_file)
    [write] = records_of(storage, "Write")  # sub-1's, at its stop; sub-2 is still running
    assert write["approval"]["reason"] == f"{REFUSED}; reconciled at SubagentStop"
    step(storage, "stop", stop(project), policy_file)
    assert len(records_of(storage, "Write")) == 2
