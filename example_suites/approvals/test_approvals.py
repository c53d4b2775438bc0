"""Human in the loop: calls a rule decided ``ask`` wait for an approver, and every answer is
recorded with who gave it."""

import pytest

POLICY = "release-policy.yaml"
MANIFEST = {"file_path": "deploy/app.yaml", "content": "replicas: 3\n"}


@pytest.mark.harness_policy(POLICY)
@pytest.mark.expect_verdict("PASS")
def test_an_approved_deploy_runs(harness):
    harness.approver(lambda call: "approve", name="release-manager")
    result = harness.call("Write", **MANIFEST)
    assert result.ok
    assert result.record["resource"] == {"approvalRequired": True}
    assert result.record["approval"] == {"approver": "release-manager", "outcome": "approve"}


@pytest.mark.harness_policy(POLICY)
@pytest.mark.expect_verdict("WARN")  # a rejection is worth a look, not a failure
def test_a_rejected_deploy_is_blocked_with_the_reason(harness):
    harness.approver(lambda call: ("reject", "change freeze until Monday"))
    result = harness.call("Write", **MANIFEST)
    assert result.blocked
    assert result.error_message == "[blocked] [web4-approval] reject: change freeze until Monday"


@pytest.mark.harness_policy(POLICY)
@pytest.mark.expect_verdict("PASS")
def test_the_approver_may_change_the_call(harness):
    def fewer_replicas(call):
        return ("modify", {**call.params, "content": "replicas: 1\n"})

    harness.approver(fewer_replicas)
    result = harness.call("Write", **MANIFEST)
    assert result.ok
    assert (harness.root / "deploy/app.yaml").read_text() == "replicas: 1\n"
    approval = result.record["approval"]
    assert approval["originalInputHash"] != approval["modifiedInputHash"]


@pytest.mark.harness_policy(POLICY)
@pytest.mark.harness_approvals({"Write": "approve", "Bash": "terminate"}, name="on-call")
@pytest.mark.expect_verdict("FAIL")  # terminate ends the session and fails it
def test_a_table_of_answers_and_terminate(harness):
    assert harness.call("Write", **MANIFEST).ok
    assert harness.call("Bash", command="git push origin main").blocked
    later = harness.call("Read", file_path="deploy/app.yaml")
    assert later.blocked and "session terminated" in later.error_message


@pytest.mark.harness_policy(POLICY)
@pytest.mark.expect_verdict("WARN")
@pytest.mark.expect_escalation("notice", trigger="approval:escalate")
def test_escalate_raises_an_immune_notice(harness):
    harness.approver(lambda call: "escalate")
    assert harness.call("Bash", command="git push origin main").blocked


@pytest.mark.harness_policy(POLICY)
@pytest.mark.expect_verdict("WARN")
def test_without_an_approver_a_call_that_asks_is_rejected(harness):
    result = harness.call("Write", **MANIFEST)
    assert result.blocked
    assert result.record["approval"] == {
        "approver": "none",
        "outcome": "reject",
        "reason": "no approver: a call that asks is rejected",
    }
