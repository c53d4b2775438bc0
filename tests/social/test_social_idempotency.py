"""Idempotent invocations: replay, conflict, interruption and restart."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_harness_audit.social import (
    ManualClock,
    SendError,
    SocialConfigError,
    SocialEndpoint,
    SocialEvent,
)


def test_same_key_same_input_replays_without_running_again(
    endpoint: SocialEndpoint, events: list[SocialEvent]
) -> None:
    first = endpoint.send("agent:bob", "once", idempotency_key="k1")
    second = endpoint.send("agent:bob", "once", idempotency_key="k1")
    assert second == first
    assert len(endpoint.posts()) == 1
    assert [event.outcome for event in events] == ["sent", "replayed"]
    state = endpoint.read_send("k1")
    assert state["state"] == "returned"
    assert state["input"] == {"to": "agent:bob", "text": "once"}


def test_same_key_different_input_conflicts(endpoint: SocialEndpoint) -> None:
    endpoint.send("agent:bob", "once", idempotency_key="k1")
    with pytest.raises(SendError) as caught:
        endpoint.send("agent:bob", "twice", idempotency_key="k1")
    assert caught.value.reason == "idempotency-conflict"
    assert len(endpoint.posts()) == 1


def test_failures_replay_with_their_detail(make_endpoint: object) -> None:
    endpoint = make_endpoint(peers=("bob",))  # type: ignore[operator]
    messages = []
    for _ in range(2):
        with pytest.raises(SendError) as caught:
            endpoint.send("agent:carol", "x", idempotency_key="k2")
        messages.append((caught.value.reason, caught.value.detail))
    assert messages[0] == messages[1] == ("unknown-agent", "agent:carol is not a known agent")
    outcome = endpoint.read_send("k2")["outcome"]
    assert outcome == {
        "failure": {
            "type": "SendError",
            "reason": "unknown-agent",
            "detail": "agent:carol is not a known agent",
        }
    }


def test_a_returned_outcome_replays_after_a_restart(tmp_path: Path, clock: ManualClock) -> None:
    with SocialEndpoint(tmp_path, "alice", ["bob"], clock=clock) as first:
        result = first.send("agent:bob", "durable", idempotency_key="k3")
    with SocialEndpoint(tmp_path, "alice", ["bob"], clock=clock) as second:
        assert second.send("agent:bob", "durable", idempotency_key="k3") == result
        assert len(second.posts()) == 1


def test_an_interrupted_send_is_indeterminate_and_retries_as_outcome_unknown(
    tmp_path: Path, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = SocialEndpoint(tmp_path, "alice", ["bob"], clock=clock)

    def interrupted(*_: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(first.sends, "execute", interrupted)
    with pytest.raises(KeyboardInterrupt):
        first.send("agent:bob", "cut off", idempotency_key="k4")
    assert first.read_send("k4")["state"] == "pending"
    first.close()
    monkeypatch.undo()

    with SocialEndpoint(tmp_path, "alice", ["bob"], clock=clock) as second:
        assert second.interrupted_sends == 1
        assert second.read_send("k4") == {
            "state": "indeterminate",
            "input": {"to": "agent:bob", "text": "cut off"},
        }
        with pytest.raises(SendError) as caught:
            second.send("agent:bob", "cut off", idempotency_key="k4")
        assert caught.value.reason == "outcome-unknown"
        assert second.posts() == []


def test_unseen_keys_are_absent_and_keys_are_checked(endpoint: SocialEndpoint) -> None:
    assert endpoint.read_send("never") == {"state": "absent"}
    for key in ("", "a\0b", "x" * 129):
        with pytest.raises(SocialConfigError, match="idempotency key"):
            endpoint.send("agent:bob", "x", idempotency_key=key)


def test_a_keyed_gather_replays_its_operation_id(endpoint: SocialEndpoint) -> None:
    from social_support import gather

    first = endpoint.send("agent:bob", "Q", gather(), idempotency_key="g1")
    again = endpoint.send("agent:bob", "Q", gather(), idempotency_key="g1")
    assert again.operation_id == first.operation_id
    assert len(endpoint.posts()) == 1
