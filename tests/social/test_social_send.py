"""Multicast sends: exact input, content limit, durability, failure reasons and events."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from social_support import READ_POSTS_SCRIPT

from pytest_harness_audit.social import (
    SendError,
    SendInputError,
    SocialConfigError,
    SocialEndpoint,
    SocialEvent,
)
from pytest_harness_audit.social.content import MAXIMUM_CONTENT_BYTES, multicast_content
from pytest_harness_audit.social.message_json import message_json_size

PRE_POST_FAULTS = [
    "not-registered",
    "version-mismatch",
    "certification-unavailable",
    "persistence-failed",
    "network-unavailable",
]


def test_multicast_stores_one_post(endpoint: SocialEndpoint) -> None:
    result = endpoint.send("agent:bob", "Hello")
    assert result.operation_id is None
    assert result.to_mcp() == {}
    (post,) = endpoint.posts()
    assert (post.sender, post.conversation, post.kind, post.text) == (
        "alice",
        "agent:bob",
        "message",
        "Hello",
    )
    assert post.post_id in result.post_ids
    assert list(post.content) == multicast_content("Hello")


def test_post_is_durable_before_send_returns(endpoint: SocialEndpoint) -> None:
    """Another process opening the database right after the send sees the post."""
    endpoint.send("group:bob,carol", "durable hello")
    output = subprocess.run(
        [sys.executable, "-c", READ_POSTS_SCRIPT, str(endpoint.store.path)],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    ).stdout
    assert output.strip() == "alice|group:alice,bob,carol|durable hello"


def test_store_uses_wal(endpoint: SocialEndpoint) -> None:
    connection = sqlite3.connect(endpoint.store.path)
    try:
        assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        connection.close()


def test_omitted_and_explicit_multicast_store_identical_content(endpoint: SocialEndpoint) -> None:
    endpoint.send("agent:bob", "same")
    endpoint.send("agent:bob", "same", {"op": "multicast"})
    first, second = endpoint.posts()
    assert first.content == second.content
    assert first.post_id != second.post_id


def test_distinct_keyless_calls_get_distinct_posts(endpoint: SocialEndpoint) -> None:
    ids = {endpoint.send("agent:bob", "again").post_ids for _ in range(3)}
    assert len(ids) == 3


def _largest_text_that_fits() -> int:
    overhead = message_json_size(multicast_content(""))
    return MAXIMUM_CONTENT_BYTES - overhead


def test_content_limit_boundary(endpoint: SocialEndpoint) -> None:
    fits = _largest_text_that_fits()
    assert message_json_size(multicast_content("a" * fits)) == MAXIMUM_CONTENT_BYTES
    endpoint.send("agent:bob", "a" * fits)
    with pytest.raises(SendError) as caught:
        endpoint.send("agent:bob", "a" * (fits + 1))
    assert caught.value.reason == "content-invalid"
    assert str(MAXIMUM_CONTENT_BYTES) in str(caught.value)
    assert len(endpoint.posts()) == 1


def test_content_limit_counts_canonical_utf8_bytes(endpoint: SocialEndpoint) -> None:
    fits = _largest_text_that_fits()
    with pytest.raises(SendError, match="content"):
        endpoint.send("agent:bob", "\u00e9" * (fits // 2 + 1))
    with pytest.raises(SendError, match="content"):
        endpoint.send("agent:bob", "\n" * (fits // 2 + 1))  # escaped as two bytes each


def test_reference_example_text_is_over_the_limit(endpoint: SocialEndpoint) -> None:
    with pytest.raises(SendError) as caught:
        endpoint.send("agent:bob", "a" * 32_741)
    assert caught.value.reason == "content-invalid"


def test_ill_formed_text_is_content_invalid(endpoint: SocialEndpoint) -> None:
    with pytest.raises(SendError) as caught:
        endpoint.send("agent:bob", "broken \ud800")
    assert caught.value.reason == "content-invalid"
    assert endpoint.posts() == []


def test_empty_text_is_a_valid_multicast(endpoint: SocialEndpoint) -> None:
    endpoint.send("agent:bob", "")
    assert len(endpoint.posts()) == 1


@pytest.mark.parametrize(
    ("data", "issue"),
    [
        ({"to": "agent:bob", "text": "x", "id": "1"}, 'id: is unexpected, expected: "to" | "text"'),
        ({"text": "x"}, "to: is missing"),
        ({"to": "agent:bob"}, "text: is missing"),
        ({"to": 7, "text": "x"}, "to: Expected string, actual 7"),
        (
            {"to": "agent:bob", "text": "x", "collective": {"op": "cancel"}},
            "collective.op: Expected",
        ),
        (
            {"to": "agent:bob", "text": "x", "collective": {"op": "multicast", "deadline": 5}},
            "collective.deadline: is unexpected",
        ),
        (
            {"to": "agent:bob", "text": "x", "collectiveResponse": {"action": "decline"}},
            "text: is unexpected",
        ),
        (
            {"to": "agent:bob", "collectiveResponse": {"action": "cancel"}},
            "collectiveResponse.action",
        ),
        ({"to": "agent:bob", "collectiveResponse": {"action": "decline", "id": "c"}}, "id"),
        ("agent:bob", "Expected object"),
    ],
)
def test_send_input_shape_is_exact(
    endpoint: SocialEndpoint, events: list[SocialEvent], data: object, issue: str
) -> None:
    with pytest.raises(SendInputError) as caught:
        endpoint.send_input(data)  # type: ignore[arg-type]
    assert issue in str(caught.value)
    assert endpoint.posts() == []
    assert events[-1].kind == "refused"
    assert events[-1].reason == "input-invalid"


@pytest.mark.parametrize("reason", PRE_POST_FAULTS)
def test_network_failures_before_a_post(
    endpoint: SocialEndpoint, events: list[SocialEvent], reason: str
) -> None:
    endpoint.inject_fault(reason)  # type: ignore[arg-type]
    with pytest.raises(SendError) as caught:
        endpoint.send("agent:bob", "hello")
    assert caught.value.reason == reason
    assert endpoint.posts() == []
    assert (events[-1].kind, events[-1].outcome, events[-1].reason) == (
        "refused",
        "refused",
        reason,
    )
    endpoint.send("agent:bob", "the fault was one-shot")
    assert len(endpoint.posts()) == 1


def test_delivery_pending_keeps_the_post_and_delivers_it_later(
    endpoint: SocialEndpoint, events: list[SocialEvent]
) -> None:
    endpoint.inject_fault("delivery-pending")
    with pytest.raises(SendError) as caught:
        endpoint.send("agent:bob", "queued")
    assert caught.value.reason == "delivery-pending"
    assert "will be delivered" in str(caught.value)
    (post,) = endpoint.posts()
    assert post.status == "pending"
    assert (events[-1].kind, events[-1].outcome) == ("send", "pending")
    assert endpoint.peer("bob").received() == []
    assert endpoint.deliver_pending() == 1
    assert endpoint.posts()[0].status == "stored"
    assert [item.text for item in endpoint.peer("bob").received()] == ["queued"]


def test_outcome_unknown_is_never_reported_as_unsent(
    endpoint: SocialEndpoint, events: list[SocialEvent]
) -> None:
    endpoint.inject_fault("outcome-unknown")
    with pytest.raises(SendError) as caught:
        endpoint.send("agent:bob", "maybe")
    assert caught.value.reason == "outcome-unknown"
    assert len(endpoint.posts()) == 1
    assert (events[-1].kind, events[-1].outcome) == ("send", "unknown")


def test_unreachable_peer_is_named(endpoint: SocialEndpoint) -> None:
    endpoint.peer("carol").unreachable("network-unavailable")
    with pytest.raises(SendError) as caught:
        endpoint.send("group:bob,carol", "hi")
    assert str(caught.value) == (
        "send failed: agent:carol could not be reached: "
        "MoltZap is unavailable (network unavailable)"
    )
    endpoint.peer("carol").reachable()
    endpoint.send("group:bob,carol", "hi")


def test_store_failure_is_persistence_failed(
    endpoint: SocialEndpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(**_: object) -> None:
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(endpoint.store, "add_post", broken)
    with pytest.raises(SendError) as caught:
        endpoint.send("agent:bob", "x")
    assert caught.value.reason == "persistence-failed"


def test_an_untyped_failure_is_outcome_unknown(
    endpoint: SocialEndpoint, events: list[SocialEvent], monkeypatch: pytest.MonkeyPatch
) -> None:
    def defect(**_: object) -> None:
        raise RuntimeError("defect")

    monkeypatch.setattr(endpoint.store, "add_post", defect)
    with pytest.raises(SendError) as caught:
        endpoint.send("agent:bob", "x")
    assert caught.value.reason == "outcome-unknown"
    assert isinstance(caught.value.__cause__, RuntimeError)
    assert (events[-1].kind, events[-1].outcome) == ("send", "unknown")


def test_every_attempt_is_reported_before_the_call_returns(
    make_endpoint: object, tmp_path: Path
) -> None:
    seen: list[tuple[str, int]] = []

    def on_event(event: SocialEvent) -> None:
        # The post is committed before the event: another connection sees it.
        connection = sqlite3.connect(tmp_path / "events" / "social.sqlite3")
        try:
            count = connection.execute("SELECT count(*) FROM posts").fetchone()[0]
        finally:
            connection.close()
        seen.append((event.kind, count))

    endpoint = SocialEndpoint(tmp_path / "events", "alice", ["bob"], on_event=on_event)
    try:
        endpoint.send("agent:bob", "one")
        assert seen == [("send", 1)]
        with pytest.raises(SendError):
            endpoint.send("agent:nobody", "two")
        assert seen == [("send", 1), ("refused", 1)]
    finally:
        endpoint.close()


def test_event_fields(endpoint: SocialEndpoint, events: list[SocialEvent]) -> None:
    endpoint.send("group:carol,bob", "hello team")
    event = events[-1]
    assert event.target == "group:alice,bob,carol"
    assert (event.to, event.operation, event.text, event.outcome) == (
        "group:carol,bob",
        "multicast",
        "hello team",
        "sent",
    )
    assert event.to_json()["target"] == "group:alice,bob,carol"
    with pytest.raises(SendError):
        endpoint.send("agent:Bob", "x")
    assert events[-1].target == "agent:Bob"
    assert events[-1].address is None
    assert events[-1].reason == "invalid-address"
    assert (events[-1].message or "").startswith("send failed: agent:Bob is not a valid")


def test_posts_filters_by_canonical_address_and_sender(endpoint: SocialEndpoint) -> None:
    endpoint.send("group:carol,bob", "to the group")
    endpoint.send("agent:bob", "to bob")
    endpoint.peer("bob").send("from bob")
    assert [post.text for post in endpoint.posts("group:bob,carol")] == ["to the group"]
    assert [post.text for post in endpoint.posts("agent:bob")] == ["to bob", "from bob"]
    assert [post.text for post in endpoint.posts("agent:bob", sender="alice")] == ["to bob"]
    assert [post.text for post in endpoint.posts(sender="bob")] == ["from bob"]
    assert endpoint.inbox()[-1]["kind"] == "multicast"


def test_first_send_to_a_group_creates_it_and_later_sends_reuse_it(
    endpoint: SocialEndpoint,
) -> None:
    endpoint.send("group:carol,bob", "first")
    endpoint.send("group:bob,alice,carol", "second")
    assert {post.conversation for post in endpoint.posts()} == {"group:alice,bob,carol"}


@pytest.mark.parametrize(
    ("local", "peers", "message"),
    [
        ("Alice", ("bob",), "local agent name"),
        ("alice", ("bob", "bob"), "listed twice"),
        ("alice", ("alice",), "own name"),
        ("alice", ("b",), "peer name 'b'"),
    ],
)
def test_endpoint_configuration_errors(
    tmp_path: Path, local: str, peers: tuple[str, ...], message: str
) -> None:
    with pytest.raises(SocialConfigError, match=message):
        SocialEndpoint(tmp_path, local, peers)


def test_unknown_peer_and_bad_options(endpoint: SocialEndpoint) -> None:
    with pytest.raises(SocialConfigError, match="not registered"):
        endpoint.peer("zed")
    with pytest.raises(SocialConfigError, match="failure_delivery"):
        endpoint.send("agent:bob", "x", failure_delivery="later")  # type: ignore[arg-type]
    with pytest.raises(SocialConfigError, match="cannot be injected"):
        endpoint.inject_fault("unknown-agent")
