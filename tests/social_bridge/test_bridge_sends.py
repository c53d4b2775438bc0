"""Sends through the bridge: every send and collective result is one chain record."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from bridge_support import all_gather, gather, message_records, social

from pytest_harness_audit.doors.social import SocialSession
from pytest_harness_audit.readers.verdict import Verdict
from pytest_harness_audit.session.harness import Harness
from pytest_harness_audit.social import (
    CollectiveError,
    ManualClock,
    SendError,
    SendInputError,
    SocialConfigError,
)
from pytest_harness_audit.social.secret_ledger import SecretLedger

Pair = tuple[Harness, SocialSession]


def test_a_multicast_is_one_record_with_the_social_fields(harness_and_session: Pair) -> None:
    harness, session = harness_and_session
    result = session.endpoint.send("agent:bob", "hello bob")

    (record,) = message_records(harness)
    assert (record.tool, record.category, record.target, record.status) == (
        "send_message",
        "message",
        "agent:bob",
        "success",
    )
    assert record.params == {"to": "agent:bob", "text": "hello bob"}
    fields = social(record)
    assert fields["event"] == "send" and fields["outcome"] == "sent"
    assert fields["from"] == "alice" and fields["operation"] == "multicast"
    assert (
        fields["postIds"]
        == list(result.post_ids)
        == [session.endpoint.posts("agent:bob")[0].post_id]
    )
    assert record.raw["firewall"]["decision"] == "admit"
    assert "firewall:admit" in record.constraints
    assert harness.verify().valid and harness.verdict is Verdict.PASS


def test_the_target_is_the_canonical_address(harness_and_session: Pair) -> None:
    harness, session = harness_and_session
    session.endpoint.send("group:dave,bob", "to the group")
    session.endpoint.send("group:carol", "a group of one other is carol's direct conversation")

    first, second = message_records(harness)
    assert first.target == "group:alice,bob,dave" and social(first)["to"] == "group:dave,bob"
    assert second.target == "agent:carol"
    assert [post.conversation for post in session.endpoint.posts()] == [
        "group:alice,bob,dave",
        "agent:carol",
    ]


def test_gather_records_the_send_then_the_result(
    harness_and_session: Pair, clock: ManualClock
) -> None:
    harness, session = harness_and_session
    session.endpoint.peer("bob").answer({"slot": "mon"})
    session.endpoint.peer("carol").answer({"slot": "tue"}, after=5)
    result = session.endpoint.send("group:bob,carol", "which slot?", gather())
    assert result.operation_id is not None and result.operation_id.startswith("col_")
    assert len(message_records(harness)) == 1  # carol has not answered yet

    clock.advance(5)
    sent, closed = message_records(harness)
    assert social(sent)["operationId"] == social(closed)["operationId"] == result.operation_id
    assert social(sent)["operation"] == "gather" and len(social(sent)["postIds"]) == 2
    assert social(closed)["event"] == "collective-result"
    assert social(closed)["outcome"] == "result" and closed.status == "success"
    assert closed.target == "group:alice,bob,carol"
    assert closed.params == {"to": "group:alice,bob,carol", "operationId": result.operation_id}
    outcomes = {item["member"]: item["outcome"] for item in social(closed)["outcomes"]}
    assert outcomes == {
        "agent:bob": {"kind": "answered", "content": {"slot": "mon"}},
        "agent:carol": {"kind": "answered", "content": {"slot": "tue"}},
    }
    assert harness.verify().valid


def test_a_result_due_during_its_send_is_recorded_after_the_send(
    harness_and_session: Pair,
) -> None:
    harness, session = harness_and_session
    session.endpoint.peer("bob").answer({"slot": "mon"})
    session.endpoint.peer("carol").answer({"slot": "tue"})
    result = session.endpoint.send("group:bob,carol", "which slot?", gather())
    sent, closed = message_records(harness)
    assert social(sent)["event"] == "send" and social(closed)["event"] == "collective-result"
    assert social(closed)["operationId"] == result.operation_id
    assert sent.position < closed.position
    assert harness.verify().valid


def test_all_gather_with_a_silent_member_closes_at_the_deadline(
    harness_and_session: Pair, clock: ManualClock
) -> None:
    harness, session = harness_and_session
    session.endpoint.peer("bob").answer({"slot": "mon"})
    result = session.endpoint.send("group:bob,carol", "which slot?", all_gather(deadline=30))
    clock.advance(29)
    assert len(message_records(harness)) == 1
    clock.advance(1)

    sent, closed = message_records(harness)
    assert social(sent)["operation"] == "all_gather" and len(social(sent)["postIds"]) == 1
    assert social(closed)["operation"] == "all_gather"
    outcomes = {item["member"]: item["outcome"]["kind"] for item in social(closed)["outcomes"]}
    assert outcomes == {"agent:bob": "answered", "agent:carol": "no-answer"}
    assert social(closed)["postIds"] == [session.endpoint.result(result.operation_id).close_post_id]  # type: ignore[union-attr, arg-type]
    assert harness.verify().valid


def test_a_response_is_recorded_and_a_second_one_refused(harness_and_session: Pair) -> None:
    harness, session = harness_and_session
    operation_id = session.endpoint.peer("bob").gather(
        "which slot?",
        deadline=60,
        requested_schema={
            "type": "object",
            "properties": {"slot": {"type": "string"}},
            "required": ["slot"],
        },
    )
    session.endpoint.respond("agent:bob", {"action": "accept", "content": {"slot": "mon"}})
    with pytest.raises(CollectiveError) as refused:
        session.endpoint.respond("agent:bob", {"action": "decline"})
    assert refused.value.kind == "request-answered"

    answered, again = message_records(harness)
    assert social(answered)["operation"] == "response"
    assert social(answered)["operationId"] == operation_id and answered.status == "success"
    assert answered.params == {
        "to": "agent:bob",
        "collectiveResponse": {"action": "accept", "content": {"slot": "mon"}},
    }
    assert again.status == "error" and social(again)["reason"] == "request-answered"
    assert again.error_message == refused.value.message
    assert harness.verdict is Verdict.PASS


@pytest.mark.parametrize(
    ("to", "reason", "target"),
    [
        ("bob", "invalid-address", "bob"),
        ("agent:zed", "unknown-agent", "agent:zed"),
        ("agent:alice", "membership-invalid", "agent:alice"),
        ("group:bob,bob", "membership-invalid", "group:bob,bob"),
    ],
)
def test_address_refusals_are_error_records_without_posts(
    harness_and_session: Pair, to: str, reason: str, target: str
) -> None:
    harness, session = harness_and_session
    with pytest.raises(SendError) as refused:
        session.endpoint.send(to, "hello")
    assert refused.value.reason == reason

    (record,) = message_records(harness)
    assert (record.status, record.target) == ("error", target)
    assert social(record)["outcome"] == "refused" and social(record)["reason"] == reason
    assert record.error_message == refused.value.message
    assert session.endpoint.posts() == []
    assert harness.verdict is Verdict.PASS


def test_oversized_content_is_refused(harness_and_session: Pair) -> None:
    harness, session = harness_and_session
    with pytest.raises(SendError, match="content"):
        session.endpoint.send("agent:bob", "x" * 40_000)
    assert social(message_records(harness)[0])["reason"] == "content-invalid"


def test_an_unknown_outcome_is_an_error_and_a_pending_one_a_success(
    harness_and_session: Pair,
) -> None:
    harness, session = harness_and_session
    session.endpoint.inject_fault("outcome-unknown")
    with pytest.raises(SendError) as unknown:
        session.endpoint.send("agent:bob", "maybe")
    assert unknown.value.reason == "outcome-unknown"
    session.endpoint.inject_fault("delivery-pending")
    with pytest.raises(SendError) as pending:
        session.endpoint.send("agent:bob", "later")
    assert pending.value.reason == "delivery-pending"

    maybe, later = message_records(harness)
    assert (maybe.status, social(maybe)["outcome"]) == ("error", "unknown")
    assert (later.status, social(later)["outcome"]) == ("success", "pending")
    assert social(later)["reason"] == "delivery-pending"


def test_a_keyed_retry_replays_and_is_recorded_as_such(harness_and_session: Pair) -> None:
    harness, session = harness_and_session
    first = session.endpoint.send("agent:bob", "once", idempotency_key="k-1")
    again = session.endpoint.send("agent:bob", "once", idempotency_key="k-1")
    assert again.post_ids == first.post_ids and len(session.endpoint.posts()) == 1

    original, replay = message_records(harness)
    assert social(original)["outcome"] == "sent"
    assert social(replay)["outcome"] == "replayed" and social(replay)["replayed"] is True
    assert replay.status == "success"


def test_malformed_input_is_recorded_once(harness_and_session: Pair) -> None:
    harness, session = harness_and_session
    with pytest.raises(SendInputError):
        session.endpoint.send_input({"to": "agent:bob", "text": "hi", "cc": "carol"})
    (record,) = message_records(harness)
    assert record.status == "error" and social(record)["reason"] == "input-invalid"


def test_a_call_the_endpoint_refuses_unreported_still_leaves_one_record(
    harness_and_session: Pair,
) -> None:
    harness, session = harness_and_session
    with pytest.raises(SocialConfigError, match="failure_delivery"):
        session.endpoint.send("agent:bob", "hi", failure_delivery="sideways")  # type: ignore[arg-type]
    (record,) = message_records(harness)
    assert record.status == "error" and "failure_delivery" in (record.error_message or "")
    assert social(record)["reason"] == "input-invalid"
    assert harness.verify().valid


def test_message_text_states_its_operation(harness_and_session: Pair) -> None:
    harness, session = harness_and_session
    session.endpoint.send_message_text("agent:bob", "plain words")
    (record,) = message_records(harness)
    assert social(record)["operation"] == "multicast" and record.params == {
        "to": "agent:bob",
        "text": "plain words",
    }


def test_sends_from_two_threads_each_leave_one_record(harness_and_session: Pair) -> None:
    import threading

    harness, session = harness_and_session

    def send_many(to: str) -> None:
        for index in range(15):
            session.endpoint.send(to, f"message {index}")

    threads = [
        threading.Thread(target=send_many, args=(to,)) for to in ("agent:bob", "agent:carol")
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    records = message_records(harness)
    assert len(records) == 30 and all(r.status == "success" for r in records)
    assert len(session.endpoint.posts()) == 30 and harness.verify().valid


def test_a_session_for_a_harness(tmp_path: Path, clock: ManualClock) -> None:
    harness = Harness.create(tmp_path, template="python-service", policy="safety")
    wired = SimpleNamespace(
        gate=harness.gate,
        storage_dir=harness.storage_dir,
        session_id=harness.session_id,
        policy=harness.policy,
        agents=("alice", "bob"),
        secrets=SecretLedger(),
    )
    with SocialSession.for_harness(wired, clock=clock) as session:
        assert session.local_agent == "alice" and session.firewall is not None
        assert session.secrets is wired.secrets
        session.endpoint.send("agent:bob", "hi")
    database = harness.storage_dir / "social" / harness.session_id / "social.sqlite3"
    assert database.is_file()
    wired.agents = ()
    with pytest.raises(SocialConfigError, match="no agents"):
        SocialSession.for_harness(wired)
