"""Approvals at the hook door: ``ask`` becomes the host's own ``permissionDecision: "ask"``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytest_harness_audit.audit.chain import AuditChain
from pytest_harness_audit.audit.record_view import CallRecord
from pytest_harness_audit.doors.hook import handle_post, handle_pre
from pytest_harness_audit.policy import Policy
from pytest_harness_audit.readers.verdict import Verdict, judge


def payload(tmp_path: Path, file_path: str, event: str = "PreToolUse") -> dict[str, Any]:
    return {
        "session_id": "host-approvals",
        "cwd": str(tmp_path / "work"),
        "hook_event_name": event,
        "tool_name": "Write",
        "tool_input": {"file_path": str(tmp_path / "work" / file_path), "content": "x"},
        "tool_use_id": "toolu_1",
    }


def chain_records(storage: Path) -> list[dict[str, Any]]:
    chain = AuditChain(storage, "host-approvals")
    try:
        return list(chain.records())
    finally:
        chain.close()


def test_ask_is_the_hosts_ask_with_the_reason(tmp_path: Path, ask_policy: Policy) -> None:
    (tmp_path / "work").mkdir()
    pre = payload(tmp_path, "deploy/app.yaml")
    answer = handle_pre(json.dumps(pre), storage=tmp_path / "audit", policy=ask_policy)
    assert answer == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "ask",
            "permissionDecisionReason": "[web4-approval] deploy files need a human",
        }
    }
    assert chain_records(tmp_path / "audit") == []  # nothing ran yet: the host asks


def test_a_call_the_user_approved_is_recorded_with_the_host_as_approver(
    tmp_path: Path, ask_policy: Policy
) -> None:
    (tmp_path / "work").mkdir()
    storage = tmp_path / "audit"
    pre = payload(tmp_path, "deploy/app.yaml")
    handle_pre(json.dumps(pre), storage=storage, policy=ask_policy)
    post = {**pre, "hook_event_name": "PostToolUse", "tool_response": {"type": "create"}}
    assert handle_post(json.dumps(post), storage=storage, policy=ask_policy) == {
        "suppressOutput": True
    }
    [record] = chain_records(storage)
    assert record["result"]["status"] == "success"
    assert record["resource"] == {"approvalRequired": True}
    assert record["approval"] == {"approver": "host", "outcome": "approve"}
    assert judge([CallRecord(record)], chain_valid=True)[0] == Verdict.PASS


def test_other_decisions_keep_their_answers(tmp_path: Path, ask_policy: Policy) -> None:
    (tmp_path / "work").mkdir()
    storage = tmp_path / "audit"
    allowed = handle_pre(
        json.dumps(payload(tmp_path, "notes.txt")), storage=storage, policy=ask_policy
    )
    assert allowed == {}
    denied = handle_pre(
        json.dumps(payload(tmp_path, "deploy/key.pem")), storage=storage, policy=ask_policy
    )
    assert denied["hookSpecificOutput"]["permissionDecision"] == "deny"
    [record] = chain_records(storage)
    assert record["resource"] == {"approvalRequired": False}
    assert "approval" not in record
