"""Gather: fan-out, scripted answers, deadlines, unreachable members and inbound failures."""

from __future__ import annotations

import json
import re

import pytest
from social_support import SLOT_SCHEMA, gather

from pytest_harness_audit.social import (
    CollectiveError,
    ManualClock,
    SendError,
    SocialEndpoint,
    SocialEvent,
)
from pytest_harness_audit.social.content import COLLECTIVE_KEY, collective_id

ID_PATTERN = re.compile(r"col_[A-Za-z0-9_-]{43}")


def outcomes(endpoint: SocialEndpoint, operation_id: str) -> list[tuple[str, str]]:
    result = endpoint.result(operation_id)
    assert result is not None
    return [(outcome.member, outcome.kind) for outcome in result.outcomes]


def test_gather_fans_out_one_request_post_per_member(
    endpoint: SocialEndpoint, clock: ManualClock
) -> None:
    result = endpoint.send("group:carol,bob", "Which day?", gather())
    assert result.operation_id is not None
    assert ID_PATTERN.fullmatch(result.operation_id)
    assert result.to_mcp() == {"operationId": result.operation_id}
    posts = endpoint.posts()
    assert [(post.conversation, post.kind) for post in posts] == [
        ("agent:bob", "request"),
        ("agent:carol", "request"),
    ]
    part = posts[0].content[1]["value"][COLLECTIVE_KEY]  # type: ignore[index]
    assert part["kind"] == "operation"
    assert part["op"] == "gather"
    assert part["id"] == result.operation_id
    assert part["deadlineAt"] == clock.now_ms() + 60_000
    assert part["requestedSchema"] == SLOT_SCHEMA
    assert collective_id("agent:alice", part["nonce"]) == result.operation_id
    assert posts[0].content[0] == {"type": "text", "text": "Which day?"}


def test_a_group_naming_one_other_agent_asks_that_agent(endpoint: SocialEndpoint) -> None:
    endpoint.send("group:bob", "Q", gather())
    assert [post.conversation for post in endpoint.posts()] == ["agent:bob"]


def test_duplicate_member_is_refused_before_any_post(endpoint: SocialEndpoint) -> None:
    with pytest.raises(SendError) as caught:
        endpoint.send("group:bob,carol,bob", "Q", gather())
    assert caught.value.reason == "membership-invalid"
    assert endpoint.posts() == []


def test_unknown_member_is_refused_before_any_post(make_endpoint: object) -> None:
    endpoint = make_endpoint(peers=("bob",))  # type: ignore[operator]
    with pytest.raises(CollectiveError) as caught:
        endpoint.send("group:bob,carol", "Q", gather())
    assert caught.value.failure.to_json() == {
        "kind": "members-unreachable",
        "members": [{"member": "agent:carol", "reason": "unknown-agent"}],
    }
    assert str(caught.value) == "send failed: agent:carol is not a known agent"
    assert endpoint.posts() == []


def test_schema_outside_the_grammar_is_refused_before_any_post(endpoint: SocialEndpoint) -> None:
    schema = {"type": "object", "properties": {"slot": {"type": "object"}}}
    with pytest.raises(CollectiveError) as caught:
        endpoint.send("agent:bob", "Q", gather(schema=schema))
    assert caught.value.kind == "schema-invalid"
    assert str(caught.value).startswith("send failed: the form is invalid (properties.slot: ")
    assert endpoint.posts() == []


def test_scripted_answers_produce_one_result(
    endpoint: SocialEndpoint, events: list[SocialEvent]
) -> None:
    endpoint.peer("bob").answer({"slot": "mon"})
    endpoint.peer("carol").decline()
    result = endpoint.send("group:bob,carol", "Which day?", gather())
    assert result.operation_id is not None
    collective = endpoint.result(result.operation_id)
    assert collective is not None
    assert collective.to_json() == {
        "kind": "collectiveResult",
        "id": result.operation_id,
        "op": "gather",
        "to": "group:alice,bob,carol",
        "question": "Which day?",
        "outcomes": [
            {"member": "agent:bob", "outcome": {"kind": "answered", "content": {"slot": "mon"}}},
            {"member": "agent:carol", "outcome": {"kind": "declined"}},
        ],
    }
    assert [(event.kind, event.operation) for event in events] == [
        ("send", "gather"),
        ("collective-result", "gather"),
    ]
    # Answers are consumed: the only inbound item is the result.
    assert [item["kind"] for item in endpoint.inbox()] == ["collectiveResult"]


def test_silent_member_is_no_answer_at_the_deadline(
    endpoint: SocialEndpoint, clock: ManualClock
) -> None:
    result = endpoint.send("group:bob,carol", "Q", gather(deadline=60))
    assert endpoint.peer("bob").answer({"slot": "tue"}) == "counted"
    assert result.operation_id is not None
    clock.advance(59.999)
    assert endpoint.result(result.operation_id) is None
    clock.advance(0.001)
    assert outcomes(endpoint, result.operation_id) == [
        ("agent:bob", "answered"),
        ("agent:carol", "no-answer"),
    ]


def test_invalid_answers_are_outcomes_with_reasons(endpoint: SocialEndpoint) -> None:
    endpoint.peer("bob").answer({"slot": "sun"})
    endpoint.peer("carol").answer({"hours": 1})
    result = endpoint.send("group:bob,carol", "Q", gather())
    assert result.operation_id is not None
    collective = endpoint.result(result.operation_id)
    assert collective is not None
    assert collective.outcome("bob").reason == (
        'field "slot" is invalid (enum: must be one of the allowed values)'
    )
    assert collective.outcome("carol").reason == (
        'field "slot" is missing; field "hours" is not in the form'
    )


def test_first_answer_counts_and_late_answers_change_nothing(
    endpoint: SocialEndpoint, clock: ManualClock, events: list[SocialEvent]
) -> None:
    result = endpoint.send("group:bob,carol", "Q", gather(deadline=60))
    operation_id = result.operation_id
    assert operation_id is not None
    bob = endpoint.peer("bob")
    assert bob.answer({"slot": "mon"}) == "counted"
    assert bob.answer({"slot": "tue"}, operation_id=operation_id) == "duplicate"
    clock.advance(60)
    assert endpoint.peer("carol").answer({"slot": "tue"}, operation_id=operation_id) == "late"
    collective = endpoint.result(operation_id)
    assert collective is not None
    assert collective.outcome("bob").content == {"slot": "mon"}
    assert collective.outcome("carol").kind == "no-answer"
    assert [event.kind for event in events].count("collective-result") == 1


def test_delayed_answers_run_on_the_clock(endpoint: SocialEndpoint, clock: ManualClock) -> None:
    endpoint.peer("bob").answer({"slot": "mon"}, after=30)
    endpoint.peer("carol").answer({"slot": "tue"}, after=60)  # exactly at the deadline: late
    result = endpoint.send("group:bob,carol", "Q", gather(deadline=60))
    assert result.operation_id is not None
    clock.advance(120)
    assert outcomes(endpoint, result.operation_id) == [
        ("agent:bob", "answered"),
        ("agent:carol", "no-answer"),
    ]


def test_answer_scheduled_after_the_request(endpoint: SocialEndpoint, clock: ManualClock) -> None:
    result = endpoint.send("agent:bob", "Q", gather(deadline=60))
    assert endpoint.peer("bob").decline(after=10) == "scheduled"
    assert result.operation_id is not None
    clock.advance(10)
    assert outcomes(endpoint, result.operation_id) == [("agent:bob", "declined")]


def test_unreachable_member_ends_no_answer(endpoint: SocialEndpoint, clock: ManualClock) -> None:
    endpoint.peer("carol").unreachable("network-unavailable")
    endpoint.peer("bob").decline()
    result = endpoint.send("group:bob,carol,dave", "Q", gather(deadline=60))
    assert result.operation_id is not None
    sent = endpoint.posts(sender="alice")
    assert [post.conversation for post in sent] == ["agent:bob", "agent:dave"]
    assert endpoint.result(result.operation_id) is None
    clock.advance(60)
    assert outcomes(endpoint, result.operation_id) == [
        ("agent:bob", "declined"),
        ("agent:carol", "no-answer"),
        ("agent:dave", "no-answer"),
    ]


def test_a_gather_fails_only_when_every_post_is_refused(endpoint: SocialEndpoint) -> None:
    endpoint.peer("bob").unreachable("network-unavailable")
    endpoint.peer("carol").unreachable("persistence-failed")
    with pytest.raises(CollectiveError) as caught:
        endpoint.send("group:bob,carol", "Q", gather())
    assert caught.value.failure.to_json() == {
        "kind": "members-unreachable",
        "members": [
            {"member": "agent:bob", "reason": "network-unavailable"},
            {"member": "agent:carol", "reason": "persistence-failed"},
        ],
    }
    assert endpoint.posts() == []


def test_queued_request_posts_say_they_will_still_be_delivered(
    endpoint: SocialEndpoint, events: list[SocialEvent]
) -> None:
    endpoint.inject_fault("delivery-pending")
    with pytest.raises(CollectiveError) as caught:
        endpoint.send("group:bob,carol", "Q", gather())
    queued = (
        "MoltZap is unavailable; the message is queued and will be delivered once MoltZap is "
        "reachable"
    )
    assert str(caught.value) == (
        f"send failed: agent:bob could not be reached: {queued}; "
        f"agent:carol could not be reached: {queued}"
    )
    assert [post.status for post in endpoint.posts()] == ["pending", "pending"]
    assert (events[-1].kind, events[-1].outcome) == ("send", "pending")


def test_a_pending_member_is_asked_once_its_post_is_delivered(
    endpoint: SocialEndpoint, clock: ManualClock
) -> None:
    carol = endpoint.peer("carol")
    carol.unreachable("delivery-pending")
    carol.answer({"slot": "tue"})
    endpoint.peer("bob").decline()
    result = endpoint.send("group:bob,carol", "Q", gather(deadline=60))
    assert result.operation_id is not None
    assert endpoint.result(result.operation_id) is None
    clock.advance(10)
    carol.reachable()
    assert outcomes(endpoint, result.operation_id) == [
        ("agent:bob", "declined"),
        ("agent:carol", "answered"),
    ]


def test_refusals_go_inbound_when_asked(make_endpoint: object) -> None:
    local = make_endpoint(peers=("bob",))  # type: ignore[operator]
    result = local.send("group:bob,carol", "Q", gather(), failure_delivery="inbound")
    assert result.operation_id is not None
    assert local.inbox() == [
        {
            "kind": "operationFailed",
            "id": result.operation_id,
            "to": "group:alice,bob,carol",
            "error": "send failed: agent:carol is not a known agent",
        }
    ]
    assert local.posts() == []


def test_a_multicast_refusal_is_always_returned(endpoint: SocialEndpoint) -> None:
    with pytest.raises(SendError):
        endpoint.send("agent:nobody", "x", failure_delivery="inbound")
    assert endpoint.inbox() == []


def test_gather_through_message_text(endpoint: SocialEndpoint) -> None:
    endpoint.peer("bob").answer({"slot": "mon"})
    text = json.dumps({"gather": "Which day?", "deadline": 60, "requestedSchema": SLOT_SCHEMA})
    result = endpoint.send_message_text("agent:bob", text)
    assert result.operation_id is not None
    assert outcomes(endpoint, result.operation_id) == [("agent:bob", "answered")]
