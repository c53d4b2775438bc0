"""``PermissionRequest``: the host's own dialog. The door never answers for the user; it marks
the call as asked, so the user's answer gets its outcome record, and refuses only calls of a
session an approver ended. Each step is a real ``harness-audit hook`` process."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_harness_audit.gate import Gate
from pytest_harness_audit.gate.seam import Outcome
from pytest_harness_audit.policy import Policy
from tests.approvals.conftest import ASK_POLICY
from tests.hooks.hook_processes import answer_of, call_records, hook

SESSION = "9d4e7b10-prompt"
PUSH = {"command": "git push origin main", "description": "Push the branch"}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "work"
    (root / "src").mkdir(parents=True)
    for number in range(200):  # a snapshot far longer than the head a reconciliation reads
        (root / "src" / f"module_{number:03}.py").write_text("")
    return root


@pytest.fixture
def policy_file(tmp_path: Path) -> Path:
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(ASK_POLICY))
    return path


def common(project: Path, event: str) -> dict[str, Any]:
    return {
        "session_id": SESSION,
        "transcript_path": str(project.parent / "transcript.jsonl"),
        "cwd": str(project),
        "permission_mode": "default",
        "hook_event_name": event,
    }


def pre(project: Path, use_id: str, tool: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    return {
        **common(project, "PreToolUse"),
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": use_id,
    }


def request(project: Path, tool: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    """A ``PermissionRequest`` payload: no ``tool_use_id``, the dialog's suggestions."""
    suggestion = {
        "type": "addRules",
        "rules": [{"toolName": tool, "ruleContent": "git push:*"}],
        "behavior": "allow",
        "destination": "localSettings",
    }
    return {
        **common(project, "PermissionRequest"),
        "tool_name": tool,
        "tool_input": tool_input,
        "permission_suggestions": [suggestion],
    }


def stop(project: Path) -> dict[str, Any]:
    return {**common(project, "Stop"), "stop_hook_active": False}


def run(storage: Path, event: str, payload: dict[str, Any], policy: Path) -> str:
    code, out, err = hook(storage, event, payload, "--policy", str(policy))
    assert code == 0, err
    return out


def test_a_prompt_of_the_hosts_own_rules_the_user_refused_is_recorded(
    tmp_path: Path, project: Path, policy_file: Path
) -> None:
    storage = tmp_path / "audit"
    assert answer_of(run(storage, "pre", pre(project, "toolu_p1", "Bash", PUSH), policy_file)) == {}
    # the host's own rules ask: the door leaves the dialog to the user
    answer = run(storage, "permission-request", request(project, "Bash", PUSH), policy_file)
    assert answer_of(answer) == {}
    assert (storage / "pending" / SESSION / "toolu_p1.json").stat().st_size > 4096
    assert run(storage, "stop", stop(project), policy_file) == ""
    [push] = call_records(storage, SESSION)
    assert push["tool"] == "Bash" and push["result"]["status"] == "blocked"
    assert push["resource"] == {"approvalRequired": False}  # the gate allowed; the host asked
    assert push["approval"]["approver"] == "host"
    assert push["approval"]["outcome"] == "reject"


def test_a_prompt_the_user_approved_is_recorded_with_the_approval(
    tmp_path: Path, project: Path, policy_file: Path
) -> None:
    storage = tmp_path / "audit"
    call = pre(project, "toolu_p2", "Bash", PUSH)
    run(storage, "pre", call, policy_file)
    run(storage, "permission-request", request(project, "Bash", PUSH), policy_file)
    response = {"stdout": "Everything up-to-date\n", "stderr": "", "interrupted": False}
    post = {**call, "hook_event_name": "PostToolUse", "tool_response": response}
    assert json.loads(run(storage, "post", post, policy_file)) == {"suppressOutput": True}
    run(storage, "stop", stop(project), policy_file)
    [push] = call_records(storage, SESSION)
    assert push["result"]["status"] == "success"
    assert push["approval"] == {"approver": "host", "outcome": "approve"}


def test_the_dialog_of_a_call_a_rule_asked_about_keeps_the_rules_ask(
    tmp_path: Path, project: Path, policy_file: Path
) -> None:
    storage = tmp_path / "audit"
    deploy = {"file_path": str(project / "deploy" / "app.yaml"), "content": "replicas: 3\n"}
    answer = answer_of(run(storage, "pre", pre(project, "toolu_p3", "Write", deploy), policy_file))
    assert answer["hookSpecificOutput"]["permissionDecision"] == "ask"
    assert (
        json.loads(
            run(storage, "permission-request", request(project, "Write", deploy), policy_file)
        )
        == {}
    )
    run(storage, "stop", stop(project), policy_file)
    [write] = call_records(storage, SESSION)
    assert write["resource"] == {"approvalRequired": True}
    assert write["approval"]["outcome"] == "reject"


def test_the_dialog_of_a_session_an_approver_ended_is_denied(
    tmp_path: Path, project: Path, policy_file: Path
) -> None:
    storage = tmp_path / "audit"
    run(storage, "pre", pre(project, "toolu_p4", "Bash", PUSH), policy_file)
    # while the host prepares its dialog, this process's approver ends the session
    gate = Gate.open(
        storage_dir=storage,
        session_id=SESSION,
        policy=Policy.from_dict(ASK_POLICY),
        root=str(project),
    )
    try:
        gate.approvals.set(lambda _request: ("terminate", "incident open"), name="on-call")
        target = {"file_path": str(project / "deploy" / "x.yaml"), "content": ""}
        gate.run("Write", target, lambda _d: Outcome("success", None, None))
    finally:
        gate.chain.close()
    answer = json.loads(
        run(storage, "permission-request", request(project, "Bash", PUSH), policy_file)
    )
    assert answer == {
        "hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {
                "behavior": "deny",
                "message": "[blocked] [web4-approval] session terminated: incident open",
            },
        },
        # the session is over: the host stops its agent, not only this call
        "continue": False,
        "stopReason": "[blocked] [web4-approval] session terminated: incident open",
    }
    run(storage, "stop", stop(project), policy_file)
    terminate, push = call_records(storage, SESSION)
    assert terminate["approval"]["outcome"] == "terminate"
    assert push["tool"] == "Bash" and push["result"]["status"] == "blocked"
    assert push["approval"] == {"outcome": "terminated", "reason": "incident open"}


def test_a_bad_permission_request_is_refused_in_one_line(tmp_path: Path, policy_file: Path) -> None:
    storage = tmp_path / "audit"
    code, out, err = hook(
        storage, "permission-request", '{"session_id": 5', "--policy", str(policy_file)
    )
    # the host ignores exit code 2 here: a broken hook denies by the decision object
    decision = answer_of(out)["hookSpecificOutput"]["decision"]
    assert (code, decision["behavior"]) == (0, "deny")
    assert "invalid JSON" in decision["message"]
    assert len(err.splitlines()) == 1 and "invalid JSON" in err
