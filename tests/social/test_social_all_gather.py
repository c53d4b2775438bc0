"""All_gather: one group post, hidden answers, the close and its failure."""

from __future__ import annotations

import pytest
from social_support import all_gather

from pytest_harness_audit.social import (
    CollectiveError,
    ManualClock,
    SendError,
    SocialEndpoint,
    SocialEvent,
)
from pytest_harness_audit.social.content import COLLECTIVE_KEY

GROUP = "group:alice,bob,carol"


@pytest.mark.parametrize("to", ["agent:bob", "group:bob", "group:alice,bob"])
def test_all_gather_needs_a_group(endpoint: SocialEndpoint, to: str) -> None:
    with pytest.raises(SendError) as caught:
        endpoint.send(to, "Q", all_gather())
    assert caught.value.reason == "membership-invalid"
    assert endpoint.posts() == []


def test_one_request_post_in_the_group(endpoint: SocialEndpoint) -> None:
    result = endpoint.send("group:carol,bob", "Which day?", all_gather())
    (post,) = endpoint.posts()
    assert (post.conversation, post.kind, post.operation_id) == (
        GROUP,
        "request",
        result.operation_id,
    )


def test_peer_answers_are_hidden_until_the_close(
    endpoint: SocialEndpoint, clock: ManualClock, events: list[SocialEvent]
) -> None:
    result = endpoint.send(GROUP, "Which day?", all_gather(deadline=60))
    operation_id = result.operation_id
    assert operation_id is not None
    assert endpoint.peer("bob").answer({"slot": "mon"}) == "counted"
    visible = [post.kind for post in endpoint.posts(GROUP)]
    assert visible == ["request"]
    assert [post.kind for post in endpoint.posts(GROUP, include_held=True)] == [
        "request",
        "response",
    ]
    assert endpoint.inbox() == []
    assert endpoint.peer("carol").decline() == "counted"
    # Everyone has answered: the requester closes at once.
    kinds = [post.kind for post in endpoint.posts(GROUP)]
    assert kinds == ["request", "response", "response", "close"]
    close = endpoint.posts(GROUP)[-1]
    answers = endpoint.posts(GROUP, sender="bob") + endpoint.posts(GROUP, sender="carol")
    part = close.content[0]["value"][COLLECTIVE_KEY]  # type: ignore[index]
    assert part == {
        "kind": "close",
        "id": operation_id,
        "included": [answer.record_hash for answer in answers],
    }
    collective = endpoint.result(operation_id)
    assert collective is not None
    assert collective.close_post_id == close.post_id
    assert collective.to_json()["closePostId"] == close.post_id
    assert [outcome.kind for outcome in collective.outcomes] == ["answered", "declined"]
    assert events[-1].kind == "collective-result"


def test_deadline_close_omits_the_silent_member(
    endpoint: SocialEndpoint, clock: ManualClock
) -> None:
    result = endpoint.send(GROUP, "Q", all_gather(deadline=30))
    assert result.operation_id is not None
    endpoint.peer("bob").answer({"slot": "tue"})
    clock.advance(30)
    close = endpoint.posts(GROUP)[-1]
    assert close.kind == "close"
    (bob_answer,) = endpoint.posts(GROUP, sender="bob")
    assert close.content[0]["value"][COLLECTIVE_KEY]["included"] == [bob_answer.record_hash]  # type: ignore[index]
    collective = endpoint.result(result.operation_id)
    assert collective is not None
    assert collective.outcome("carol").kind == "no-answer"
    assert (
        endpoint.peer("carol").answer({"slot": "mon"}, operation_id=result.operation_id) == "late"
    )


def test_an_unreachable_member_fails_the_post_for_everyone(endpoint: SocialEndpoint) -> None:
    endpoint.peer("carol").unreachable("certification-unavailable")
    with pytest.raises(CollectiveError) as caught:
        endpoint.send(GROUP, "Q", all_gather())
    assert [item.to_json() for item in caught.value.failure.members] == [
        {"member": "agent:bob", "reason": "certification-unavailable"},
        {"member": "agent:carol", "reason": "certification-unavailable"},
    ]
    assert endpoint.posts() == []


def test_unknown_members_alone_are_named(make_endpoint: object) -> None:
    endpoint = make_endpoint(peers=("bob",))  # type: ignore[operator]
    with pytest.raises(CollectiveError) as caught:
        endpoint.send("group:bob,carol,dave", "Q", all_gather())
    assert [item.member for item in caught.value.failure.members] == ["agent:carol", "agent:dave"]


def test_a_close_that_cannot_be_shared_fails_at_the_requester(
    endpoint: SocialEndpoint, clock: ManualClock, events: list[SocialEvent]
) -> None:
    result = endpoint.send(GROUP, "Q", all_gather(deadline=10))
    endpoint.peer("bob").unreachable("network-unavailable")
    clock.advance(10)
    assert result.operation_id is not None
    assert endpoint.result(result.operation_id) is None
    assert endpoint.inbox() == [
        {
            "kind": "operationFailed",
            "id": result.operation_id,
            "to": GROUP,
            "error": "all_gather failed: the result could not be shared with the group: "
            "agent:bob could not be reached: MoltZap is unavailable (network unavailable)",
        }
    ]
    assert (events[-1].kind, events[-1].outcome) == ("collective-result", "failed")


def test_members_receive_the_result_of_a_peer_all_gather(
    endpoint: SocialEndpoint, events: list[SocialEvent]
) -> None:
    from social_support import SLOT_SCHEMA

    endpoint.peer("carol").answer({"slot": "tue"})
    operation_id = endpoint.peer("bob").all_gather("Which day?", SLOT_SCHEMA, to=GROUP)
    request = endpoint.inbox()[-1]
    assert (request["kind"], request["from"], request["to"]) == (
        "collectiveRequest",
        "agent:bob",
        GROUP,
    )
    # Carol answered at once, but her answer is held until the close.
    assert endpoint.posts(GROUP, sender="carol") == []
    result = endpoint.respond(GROUP, {"action": "accept", "content": {"slot": "mon"}})
    assert result.operation_id == operation_id
    collective = endpoint.result(operation_id)
    assert collective is not None
    assert [(outcome.member, outcome.kind) for outcome in collective.outcomes] == [
        ("agent:alice", "answered"),
        ("agent:carol", "answered"),
    ]
    assert [event.kind for event in events] == ["send", "collective-result"]
    with pytest.raises(CollectiveError) as caught:
        endpoint.respond(GROUP, {"action": "decline"})
    assert caught.value.kind == "request-expired"
