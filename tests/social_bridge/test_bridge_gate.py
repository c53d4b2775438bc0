"""The gate comes first: a policy deny or a quarantine blocks a send before the endpoint runs."""

from __future__ import annotations

import pytest
from bridge_support import SessionFactory, deny_messages, gather, message_records, social

from pytest_harness_audit.doors.social import SendBlockedError
from pytest_harness_audit.policy import Policy
from pytest_harness_audit.readers.verdict import Verdict
from pytest_harness_audit.social import ManualClock, SocialToolError


def test_a_policy_deny_blocks_the_send_and_fails_the_session(
    make_session: SessionFactory,
) -> None:
    harness, session = make_session(Policy.from_dict(deny_messages()))
    with pytest.raises(SendBlockedError) as blocked:
        session.endpoint.send("group:carol,bob", "hello")
    assert str(blocked.value) == "[blocked] [web4-policy] messages are not allowed here"
    assert blocked.value.error_data() == {
        "reason": "policy-blocked",
        "detail": str(blocked.value),
    }
    assert session.endpoint.posts() == []

    (record,) = message_records(harness)
    assert (record.status, record.decision, record.rule_id) == ("blocked", "deny", "no-messages")
    assert record.target == "group:alice,bob,carol"
    assert social(record) == {
        "event": "blocked",
        "outcome": "blocked",
        "from": "alice",
        "to": "group:carol,bob",
        "address": "group:alice,bob,carol",
        "operation": "multicast",
        "reason": "policy-blocked",
    }
    verdict, reasons = harness.judge()
    assert verdict is Verdict.FAIL and reasons[0].code == "blocked"
    assert harness.denied(tool="send_message") == [record]


def test_a_deny_narrowed_to_one_address_leaves_others_alone(make_session: SessionFactory) -> None:
    policy = Policy.from_dict(deny_messages(targetPatterns=["agent:dave"]))
    harness, session = make_session(policy)
    session.endpoint.send("agent:bob", "fine")
    with pytest.raises(SendBlockedError):
        session.endpoint.send("agent:dave", "not fine")
    assert [r.status for r in message_records(harness)] == ["success", "blocked"]


def test_a_policy_deny_over_mcp_is_a_tool_error_with_its_data(
    make_session: SessionFactory,
) -> None:
    harness, session = make_session(Policy.from_dict(deny_messages()))
    with pytest.raises(SocialToolError) as refused:
        session.endpoint.mcp_send_message({"input": {"to": "agent:bob", "text": "hi"}})
    assert refused.value.code == -32000
    assert refused.value.data == {
        "reason": "certification-unavailable",
        "detail": "[blocked] [web4-policy] messages are not allowed here",
        "harnessReason": "policy-blocked",
    }
    assert [r.status for r in message_records(harness)] == ["blocked"]


def test_a_dry_run_deny_lets_the_send_out_and_warns(make_session: SessionFactory) -> None:
    document = deny_messages()
    document["enforce"] = False
    harness, session = make_session(Policy.from_dict(document))
    session.endpoint.send("agent:bob", "hi")
    (record,) = message_records(harness)
    assert (record.status, record.decision, record.enforced) == ("success", "deny", False)
    assert harness.verdict is Verdict.WARN and len(session.endpoint.posts()) == 1


def test_a_quarantine_blocks_sends_but_never_the_results_of_earlier_ones(
    make_session: SessionFactory, clock: ManualClock
) -> None:
    harness, session = make_session(Policy.preset("safety", enforce=False))
    session.endpoint.peer("bob").answer({"slot": "mon"}, after=10)
    result = session.endpoint.send("agent:bob", "which slot?", gather())
    # A credential read then a message is the secret-then-send flow: quarantine.
    assert harness.call("Read", file_path=".env").ok
    session.endpoint.send("agent:carol", "anyone there?")
    assert harness.immune_level == "quarantine"
    with pytest.raises(SendBlockedError) as blocked:
        session.endpoint.send("agent:carol", "hello?")
    assert blocked.value.quarantined and "quarantined" in str(blocked.value)

    clock.advance(10)  # bob's answer arrives during the quarantine
    records = message_records(harness)
    assert [social(r)["event"] for r in records] == [
        "send",
        "send",
        "blocked",
        "collective-result",
    ]
    late = records[-1]
    assert late.status == "success" and not late.quarantined
    assert social(late)["operationId"] == result.operation_id
    assert session.endpoint.result(result.operation_id) is not None  # type: ignore[arg-type]
    assert harness.verify().valid
