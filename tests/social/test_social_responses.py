"""Responses: answering the one request open in a conversation, and every refusal."""

from __future__ import annotations

import pytest
from social_support import SLOT_SCHEMA

from pytest_harness_audit.social import (
    CollectiveError,
    ManualClock,
    SendError,
    SocialEndpoint,
    SocialEvent,
)
from pytest_harness_audit.social.content import COLLECTIVE_KEY


def test_a_valid_accept_posts_one_response_to_the_requester(
    endpoint: SocialEndpoint, events: list[SocialEvent]
) -> None:
    operation_id = endpoint.peer("bob").gather("Which day?", SLOT_SCHEMA)
    request = endpoint.inbox()[-1]
    assert request["kind"] == "collectiveRequest"
    assert request["id"] == operation_id
    assert request["question"] == "Which day?"
    result = endpoint.respond("agent:bob", {"action": "accept", "content": {"slot": "mon"}})
    assert result.operation_id == operation_id
    (post,) = endpoint.posts("agent:bob", sender="alice")
    assert (post.kind, post.conversation, post.text) == ("response", "agent:bob", None)
    assert post.content == (
        {
            "type": "data",
            "value": {
                COLLECTIVE_KEY: {
                    "kind": "response",
                    "id": operation_id,
                    "action": "accept",
                    "content": {"slot": "mon"},
                }
            },
        },
    )
    assert (events[-1].operation, events[-1].operation_id) == ("response", operation_id)


def test_an_invalid_answer_is_refused_and_nothing_is_sent(endpoint: SocialEndpoint) -> None:
    operation_id = endpoint.peer("bob").gather("Which day?", SLOT_SCHEMA)
    with pytest.raises(CollectiveError) as caught:
        endpoint.respond("agent:bob", {"action": "accept", "content": {"slot": "sun"}})
    assert caught.value.operation_id == operation_id
    assert caught.value.failure.to_json() == {
        "kind": "answer-invalid",
        "fields": [
            {
                "field": "slot",
                "reason": "invalid",
                "detail": "enum: must be one of the allowed values",
            }
        ],
    }
    assert str(caught.value) == (
        'reply failed: field "slot" is invalid (enum: must be one of the allowed values)'
    )
    assert endpoint.posts(sender="alice") == []


def test_a_second_answer_is_refused(endpoint: SocialEndpoint) -> None:
    endpoint.peer("bob").gather("Q", SLOT_SCHEMA)
    endpoint.respond("agent:bob", {"action": "decline"})
    with pytest.raises(CollectiveError) as caught:
        endpoint.respond("agent:bob", {"action": "decline"})
    assert caught.value.kind == "request-answered"
    assert len(endpoint.posts(sender="alice")) == 1


def test_no_open_request_is_request_none(endpoint: SocialEndpoint) -> None:
    endpoint.peer("bob").gather("Q", SLOT_SCHEMA)
    with pytest.raises(CollectiveError) as caught:
        endpoint.respond("agent:carol", {"action": "decline"})
    assert caught.value.kind == "request-none"
    assert caught.value.operation_id.startswith("col_")


def test_two_open_requests_are_ambiguous(endpoint: SocialEndpoint) -> None:
    bob = endpoint.peer("bob")
    bob.gather("Q1", SLOT_SCHEMA)
    bob.gather("Q2", SLOT_SCHEMA)
    with pytest.raises(CollectiveError) as caught:
        endpoint.respond("agent:bob", {"action": "decline"})
    assert caught.value.kind == "request-ambiguous"
    assert endpoint.posts(sender="alice") == []


def test_an_answer_at_the_deadline_is_expired(endpoint: SocialEndpoint, clock: ManualClock) -> None:
    endpoint.peer("bob").gather("Q", SLOT_SCHEMA, deadline=60)
    clock.advance(60)
    with pytest.raises(CollectiveError) as caught:
        endpoint.respond("agent:bob", {"action": "decline"})
    assert caught.value.kind == "request-expired"
    assert str(caught.value) == "reply failed: the question's deadline has passed"


def test_refusals_go_inbound_when_asked(endpoint: SocialEndpoint) -> None:
    result = endpoint.respond("agent:bob", {"action": "decline"}, failure_delivery="inbound")
    assert result.operation_id is not None
    assert endpoint.inbox() == [
        {
            "kind": "operationFailed",
            "id": result.operation_id,
            "to": "agent:bob",
            "error": "reply failed: no question is open in this conversation",
        }
    ]


def test_answer_through_message_text(endpoint: SocialEndpoint) -> None:
    operation_id = endpoint.peer("bob").gather("Q", SLOT_SCHEMA)
    result = endpoint.send_message_text(
        "agent:bob", '{"action": "accept", "content": {"slot": "tue"}}'
    )
    assert result.operation_id == operation_id


def test_respond_address_errors(endpoint: SocialEndpoint) -> None:
    with pytest.raises(SendError) as caught:
        endpoint.respond("agent:nobody", {"action": "decline"})
    assert caught.value.reason == "unknown-agent"


def test_a_pending_answer_counts_once_delivered(
    endpoint: SocialEndpoint, clock: ManualClock
) -> None:
    operation_id = endpoint.peer("bob").gather("Q", SLOT_SCHEMA, deadline=60)
    endpoint.peer("bob").unreachable("delivery-pending")
    with pytest.raises(SendError) as caught:
        endpoint.respond("agent:bob", {"action": "decline"})
    assert caught.value.reason == "delivery-pending"
    with pytest.raises(CollectiveError) as again:
        endpoint.respond("agent:bob", {"action": "decline"})
    assert again.value.kind == "request-answered"
    endpoint.peer("bob").reachable()
    operation = endpoint.collectives.operation(operation_id)
    assert operation is not None
    assert operation.outcomes["alice"].kind == "declined"
