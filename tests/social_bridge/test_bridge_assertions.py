"""Assertions over the recorded sends, and the arguments of the social markers."""

from __future__ import annotations

from typing import Any

import pytest
from bridge_support import SessionFactory, gather

from pytest_harness_audit.doors.social import (
    SocialSession,
    assert_not_sent,
    assert_refused,
    assert_sent,
    check_refused,
    parse_expect_refused,
    parse_harness_agents,
    refused_records,
    sent_records,
)
from pytest_harness_audit.errors import UsageError
from pytest_harness_audit.session.harness import Harness
from pytest_harness_audit.social import FirewallSendError, MessageFirewall, MessageRule, SendError

Pair = tuple[Harness, SocialSession]


@pytest.fixture
def sent(make_session: SessionFactory) -> Harness:
    """bob got a greeting, the group a question, one send was refused by the firewall and one
    had no valid address."""
    rule = MessageRule("no-passwords", "refuse", text_patterns=("(?i)password",))
    harness, session = make_session(firewall=MessageFirewall([rule]))
    session.endpoint.send("agent:bob", "hello bob")
    session.endpoint.send("group:carol,bob", "which slot?", gather())
    with pytest.raises(FirewallSendError):
        session.endpoint.send("agent:dave", "the password is swordfish")
    with pytest.raises(SendError):
        session.endpoint.send("dave", "hi")
    return harness


def test_assert_sent_matches_address_forms_and_text(sent: Harness) -> None:
    records = sent.records
    assert len(assert_sent(records, "agent:bob", "hello*")) == 1
    assert len(assert_sent(records, "bob")) == 1
    assert len(assert_sent(records, "group:bob,carol", "*slot?")) == 1
    assert len(assert_sent(records, "group:alice,carol,bob")) == 1
    assert len(assert_sent(records, "group:*")) == 1
    assert len(sent_records(records)) == 2


def test_assert_sent_lists_the_recorded_sends_when_it_fails(sent: Harness) -> None:
    with pytest.raises(AssertionError) as failed:
        assert_sent(sent.records, "agent:carol", "*")
    message = str(failed.value)
    assert "expected a message sent matching to='agent:carol' text='*', found none" in message
    assert '#0 multicast agent:bob → sent "hello bob"' in message
    assert "gather group:alice,bob,carol → sent" in message
    assert "refused (firewall-refused) [firewall refuse, enforcement]" in message
    assert "dave → refused (invalid-address)" in message
    with pytest.raises(AssertionError):
        assert_sent(sent.records, "agent:bob", "goodbye*")


def test_assert_not_sent(sent: Harness) -> None:
    assert_not_sent(sent.records, "agent:dave")
    assert_not_sent(sent.records, text_glob="*password*")
    with pytest.raises(AssertionError, match=r"1 went out or may have:\n  #0 multicast agent:bob"):
        assert_not_sent(sent.records, "agent:bob")
    with pytest.raises(AssertionError):
        assert_not_sent(sent.records)


def test_an_unknown_outcome_counts_as_maybe_sent(harness_and_session: Pair) -> None:
    harness, session = harness_and_session
    session.endpoint.inject_fault("outcome-unknown")
    with pytest.raises(SendError):
        session.endpoint.send("agent:bob", "maybe")
    assert sent_records(harness.records) == []
    assert refused_records(harness.records) == []
    with pytest.raises(AssertionError, match="unknown"):
        assert_not_sent(harness.records, "agent:bob")


def test_refused_records_and_the_expect_refused_check(sent: Harness) -> None:
    records = sent.records
    assert check_refused(records) is None
    assert check_refused(records, "firewall-refused", "agent:dave") is None
    assert check_refused(records, "firewall-refused", "dave") is None
    assert check_refused(records, "invalid-address", "dave") is None
    assert [r.target for r in assert_refused(records, "invalid-address")] == ["dave"]
    problem = check_refused(records, "policy-blocked")
    assert problem is not None
    assert problem.startswith("expected a refused send matching reason='policy-blocked'")
    assert "Recorded sends:" in problem and "hello bob" in problem
    assert check_refused(records, "firewall-refused", "agent:bob") is not None


def test_no_sends_says_so(harness_and_session: Pair) -> None:
    harness, _ = harness_and_session
    problem = check_refused(harness.records)
    assert problem is not None and "(no sends recorded)" in problem


def test_text_assertions_need_recorded_parameters() -> None:
    record = {
        "recordId": "audit:00000000",
        "tool": "send_message",
        "request": {"toolName": "send_message", "target": "agent:bob"},
        "result": {"status": "success"},
        "social": {"event": "send", "outcome": "sent", "from": "alice", "address": "agent:bob"},
    }
    assert len(sent_records([record], "agent:bob")) == 1
    with pytest.raises(UsageError, match="audit level 'verbose'"):
        assert_sent([record], "agent:bob", "hello*")


def test_harness_agents_arguments() -> None:
    assert parse_harness_agents(("alice", "bob", "carol"), {}) == ("alice", "bob", "carol")
    for args, kwargs, problem in [
        ((), {}, "needs at least"),
        (("Alice",), {}, "'Alice' is not an agent name"),
        (("alice", "bob", "bob"), {}, "'bob' is named twice"),
        (("alice",), {"peers": ["bob"]}, "keyword 'peers'"),
        (("alice", 3), {}, "3 is not an agent name"),
    ]:
        with pytest.raises(UsageError, match=problem):
            parse_harness_agents(args, kwargs)


def test_expect_refused_arguments() -> None:
    assert parse_expect_refused((), {}) == {"reason": None, "to": None}
    assert parse_expect_refused(("firewall-refused", "group:bob,carol"), {}) == {
        "reason": "firewall-refused",
        "to": "group:bob,carol",
    }
    assert parse_expect_refused((), {"to": "agent:bob"}) == {"reason": None, "to": "agent:bob"}
    cases: list[tuple[tuple[Any, ...], dict[str, Any], str]] = [
        (("nope",), {}, "unknown reason 'nope'"),
        (("outcome-unknown",), {}, "unknown reason"),
        ((), {"who": "bob"}, "unknown argument 'who'"),
        (("policy-blocked",), {"reason": "policy-blocked"}, "given twice"),
        ((), {"to": 3}, "to must be a string"),
        (("a", "b", "c"), {}, "at most 2"),
    ]
    for args, kwargs, problem in cases:
        with pytest.raises(UsageError, match=problem):
            parse_expect_refused(args, kwargs)
