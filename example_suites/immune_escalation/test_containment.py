"""Immune escalation: patterns of misbehaviour are contained, and the return path is recorded."""

import pytest


@pytest.mark.harness_workspace("python-service")
@pytest.mark.expect_verdict("FAIL")
@pytest.mark.expect_escalation("quarantine", trigger="repeated_failure")
def test_a_retry_loop_is_stopped(harness):
    harness.run_script("retry-loop")
    assert harness.calls(status="blocked"), "the loop went on after the quarantine"


@pytest.mark.harness_workspace("python-service")
@pytest.mark.expect_verdict("FAIL")
@pytest.mark.expect_escalation("quarantine", trigger="enforced_deny")
def test_probing_after_a_denial_is_contained(harness):
    harness.run_script("probe-after-denial")


@pytest.mark.harness_policy("safety", enforce=False)  # dry-run: the read goes through
@pytest.mark.harness_workspace("python-service")
@pytest.mark.expect_verdict("FAIL")
@pytest.mark.expect_escalation("quarantine", trigger="flow:exfiltration")
def test_secret_read_then_network_is_exfiltration(harness):
    harness.run_script("secret-then-network")


@pytest.mark.harness_workspace("python-service")
@pytest.mark.expect_verdict("FAIL")
def test_a_human_lifts_the_quarantine_and_work_resumes(harness):
    harness.run_script("retry-loop")
    assert harness.immune_level == "quarantine"
    harness.lift(reason="flaky command fixed; resuming")
    assert harness.call("Read", file_path="README.md").ok
    lift = next(r for r in harness.records if r.kind == "lift")
    assert lift.raw["immune"]["reason"] == "flaky command fixed; resuming"
