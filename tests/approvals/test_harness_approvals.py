"""Approvals at the harness door: every outcome, fail-closed, bad answers, verdicts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_harness_audit.audit.canonical import canonical_hash
from pytest_harness_audit.errors import PolicyError
from pytest_harness_audit.gate.approvals import ApprovalRequest, read_answer, table_approver
from pytest_harness_audit.policy import Policy
from pytest_harness_audit.readers.verdict import Verdict
from pytest_harness_audit.session.harness import Harness

from .conftest import ASK_POLICY

DEPLOY = {"file_path": "deploy/app.yaml", "content": "replicas: 2\n"}


@pytest.fixture
def harness(tmp_path: Path, ask_policy: Policy) -> Harness:
    made = Harness.create(tmp_path, policy=ask_policy)
    yield made
    made.close()


def records(harness: Harness) -> list[dict[str, Any]]:
    return [dict(record.raw) for record in harness.records]


def test_require_approval_is_an_alias_of_ask() -> None:
    data = {**ASK_POLICY, "rules": [{**ASK_POLICY["rules"][0], "decision": "require_approval"}]}
    evaluation = Policy.from_dict(data).evaluate("Write", DEPLOY)
    assert evaluation.decision == "ask"
    assert "policy:ask" in evaluation.constraints
    assert not evaluation.blocked


def test_unknown_decision_names_the_field() -> None:
    data = {**ASK_POLICY, "rules": [{**ASK_POLICY["rules"][0], "decision": "approve"}]}
    with pytest.raises(PolicyError, match=r"decision.*ask.*require_approval.*'approve'"):
        Policy.from_dict(data)


def test_ask_is_not_a_default_policy() -> None:
    with pytest.raises(PolicyError, match="defaultPolicy"):
        Policy.from_dict({"defaultPolicy": "ask"})


def test_without_an_approver_an_ask_is_rejected(harness: Harness) -> None:
    result = harness.call("Write", **DEPLOY)
    assert result.status == "blocked"
    assert "no approver" in (result.error_message or "")
    assert result.record["resource"] == {"approvalRequired": True}
    assert result.record["approval"]["approver"] == "none"
    assert result.record["approval"]["outcome"] == "reject"
    assert not (harness.root / "deploy/app.yaml").exists()
    assert harness.verdict == Verdict.WARN


def test_other_calls_do_not_require_approval(harness: Harness) -> None:
    seen: list[ApprovalRequest] = []
    harness.approver(lambda call: seen.append(call) or "reject")
    result = harness.call("Write", file_path="notes.txt", content="x")
    assert result.status == "success"
    assert result.record["resource"] == {"approvalRequired": False}
    assert "approval" not in result.record
    assert seen == []
    assert harness.verdict == Verdict.PASS


def test_approve_runs_the_call(harness: Harness) -> None:
    seen: list[ApprovalRequest] = []
    harness.approver(lambda call: seen.append(call) or "approve")
    result = harness.call("Write", **DEPLOY)
    assert result.status == "success"
    assert (harness.root / "deploy/app.yaml").read_text() == "replicas: 2\n"
    assert result.record["approval"] == {"approver": "scripted", "outcome": "approve"}
    assert result.record["resource"] == {"approvalRequired": True}
    assert "approval:approve" in result.record["rules"]["constraints"]
    [request] = seen
    assert (request.tool, request.rule_id, request.door) == ("Write", "ask-deploy", "scripted")
    assert request.reason == "deploy files need a human"
    assert dict(request.params) == DEPLOY
    assert harness.verdict == Verdict.PASS


def test_reject_blocks_with_the_reason(harness: Harness) -> None:
    harness.approver(lambda call: ("reject", "not on a Friday"), name="alice")
    result = harness.call("Write", **DEPLOY)
    assert result.status == "blocked"
    assert result.error_message == "[blocked] [web4-approval] reject: not on a Friday"
    assert result.record["approval"] == {
        "approver": "alice",
        "outcome": "reject",
        "reason": "not on a Friday",
    }
    assert not (harness.root / "deploy/app.yaml").exists()
    verdict, reasons = harness.judge()
    assert verdict == Verdict.WARN
    assert [reason.code for reason in reasons] == ["approval-reject"]


def test_modify_runs_with_new_params_and_records_both_hashes(harness: Harness) -> None:
    changed = {"file_path": "deploy/app.yaml", "content": "replicas: 1\n"}
    harness.approver(lambda call: ("modify", changed))
    result = harness.call("Write", **DEPLOY)
    assert result.status == "success"
    assert (harness.root / "deploy/app.yaml").read_text() == "replicas: 1\n"
    approval = result.record["approval"]
    assert approval["outcome"] == "modify"
    assert approval["originalInputHash"] == canonical_hash(DEPLOY, "params")
    assert approval["modifiedInputHash"] == canonical_hash(changed, "params")
    assert result.record["request"]["inputHash"] == approval["modifiedInputHash"]
    assert harness.verdict == Verdict.PASS


def test_modify_cannot_smuggle_a_denied_call(harness: Harness) -> None:
    harness.approver(lambda call: ("modify", {"file_path": "deploy/key.pem", "content": "k"}))
    result = harness.call("Write", **DEPLOY)
    assert result.status == "blocked"
    assert "modified params refused: [web4-policy]" in (result.error_message or "")
    assert result.record["request"]["target"] == "deploy/key.pem"
    assert not (harness.root / "deploy/key.pem").exists()
    assert harness.verdict == Verdict.FAIL


def test_modify_cannot_reach_the_audit_store(harness: Harness) -> None:
    store = str(harness.storage_dir / "audit" / "forged.jsonl")
    harness.approver(lambda call: ("modify", {"file_path": store, "content": "{}"}))
    result = harness.call("Write", **DEPLOY)
    assert result.status == "blocked"
    assert "modified params refused" in (result.error_message or "")
    assert not Path(store).exists()


def test_params_cannot_forge_an_approval(harness: Harness) -> None:
    result = harness.call("Write", file_path="notes.txt", content="x", approval="approve")
    assert result.record["resource"] == {"approvalRequired": False}
    assert "approval" not in result.record
    forged = harness.call("Write", **DEPLOY, approval={"outcome": "approve"})
    assert forged.status == "blocked"
    assert forged.record["approval"]["approver"] == "none"


def test_escalate_appends_an_immune_escalation_then_rejects(harness: Harness) -> None:
    harness.approver(lambda call: "escalate")
    result = harness.call("Write", **DEPLOY)
    assert result.status == "blocked"
    assert result.record["approval"]["outcome"] == "escalate"
    call, escalation = records(harness)[-2:]
    assert call["recordId"] == result.record["recordId"]
    assert escalation["kind"] == "escalation"
    assert escalation["immune"]["trigger"] == "approval:escalate"
    assert escalation["immune"]["evidence"] == [result.record["recordId"]]
    assert escalation["immune"]["scopeValue"] == "Write"
    verdict, reasons = harness.judge()
    assert verdict == Verdict.WARN
    assert sorted(reason.code for reason in reasons) == ["approval-reject", "notice"]


def test_terminate_refuses_every_further_call(harness: Harness) -> None:
    harness.approver(lambda call: "terminate", name="ops")
    first = harness.call("Write", **DEPLOY)
    assert first.status == "blocked"
    assert first.record["approval"] == {"approver": "ops", "outcome": "terminate"}
    later = harness.call("Read", file_path="README.md")
    assert later.status == "blocked"
    assert "session terminated" in (later.error_message or "")
    assert later.record["approval"]["outcome"] == "terminated"
    verdict, reasons = harness.judge()
    assert verdict == Verdict.FAIL
    assert [reason.code for reason in reasons] == ["approval-terminate", "approval-terminate"]


@pytest.mark.parametrize(
    ("answer", "named"),
    [
        ("maybe", "unknown answer 'maybe'"),
        ("APPROVE", "unknown answer 'APPROVE'"),
        (None, "unknown answer None"),
        (("modify", "rm -rf /"), "'modify' needs new params"),
        (("modify",), "'modify' needs new params"),
    ],
)
def test_an_unknown_answer_is_one_line_and_rejects(
    harness: Harness, answer: object, named: str
) -> None:
    harness.approver(lambda call: answer)
    result = harness.call("Write", **DEPLOY)
    assert result.status == "blocked"
    message = result.error_message or ""
    assert named in message
    assert "\n" not in message
    assert result.record["approval"]["error"]
    assert not (harness.root / "deploy/app.yaml").exists()
    assert len(records(harness)) == 1  # the call's record is there, nothing lost
    assert harness.verdict == Verdict.FAIL


def test_an_approver_that_raises_rejects(harness: Harness) -> None:
    def broken(call: ApprovalRequest) -> str:
        raise RuntimeError("pager down")

    harness.approver(broken)
    result = harness.call("Write", **DEPLOY)
    assert result.status == "blocked"
    assert "RuntimeError: pager down" in (result.error_message or "")


def test_a_coroutine_approver_is_refused_at_a_door_that_does_not_await(harness: Harness) -> None:
    async def later(call: ApprovalRequest) -> str:
        return "approve"

    harness.approver(later)
    result = harness.call("Write", **DEPLOY)
    assert result.status == "blocked"
    assert "coroutine" in (result.error_message or "")


def test_a_table_answers_by_tool_glob(harness: Harness) -> None:
    harness.approver({"Edit": "reject", "Wr*": "approve"}, name="table")
    assert harness.call("Write", **DEPLOY).status == "success"
    assert records(harness)[-1]["approval"] == {"approver": "table", "outcome": "approve"}


def test_a_table_rejects_tools_it_does_not_name() -> None:
    answer = table_approver({"Edit": "approve"})
    request = ApprovalRequest("Write", {}, "file_write", "r", "why", "scripted")
    assert read_answer(answer(request), "t").outcome == "reject"


def test_a_bad_table_entry_names_the_glob() -> None:
    with pytest.raises(ValueError, match=r"approvals\['Write'\]: unknown answer 'yes'"):
        table_approver({"Write": "yes"})


def test_removing_the_approver_fails_closed_again(harness: Harness) -> None:
    harness.approver(lambda call: "approve")
    harness.approver(None)
    assert harness.call("Write", **DEPLOY).status == "blocked"


def test_immune_ladder_reads_an_ask(tmp_path: Path) -> None:
    data = {**ASK_POLICY, "immune": {"enabled": True}}
    made = Harness.create(tmp_path, policy=Policy.from_dict(data))
    try:
        made.approver(lambda call: "approve")
        assert made.call("Write", **DEPLOY).status == "success"
        made.approver(lambda call: "reject")
        assert made.call("Write", **DEPLOY).status == "blocked"
        made.gate.sync()
    finally:
        made.close()
