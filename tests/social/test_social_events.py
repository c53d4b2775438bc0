"""The event stream a harness records: order, re-entrancy and lifecycle."""

from __future__ import annotations

from pathlib import Path

from social_support import gather

from pytest_harness_audit.social import ManualClock, SocialEndpoint, SocialEvent


def test_a_callback_may_read_the_endpoint_without_reordering_events(
    tmp_path: Path, clock: ManualClock
) -> None:
    log: list[str] = []
    endpoint: SocialEndpoint

    def on_event(event: SocialEvent) -> None:
        log.append(f"{event.kind}:{len(endpoint.posts())}")

    endpoint = SocialEndpoint(tmp_path, "alice", ["bob"], clock=clock, on_event=on_event)
    try:
        endpoint.peer("bob").answer({"slot": "mon"})
        endpoint.send("agent:bob", "Q", gather())
        # The result follows the send's own event; the answer post exists by then.
        assert log == ["send:1", "collective-result:2"]
    finally:
        endpoint.close()


def test_a_closed_endpoint_ignores_its_clock(tmp_path: Path, clock: ManualClock) -> None:
    events: list[SocialEvent] = []
    endpoint = SocialEndpoint(tmp_path, "alice", ["bob"], clock=clock, on_event=events.append)
    endpoint.send("agent:bob", "Q", gather(deadline=5))
    endpoint.close()
    clock.advance(10)
    assert [event.kind for event in events] == ["send"]


def test_event_json_is_compact_and_complete(
    endpoint: SocialEndpoint, events: list[SocialEvent]
) -> None:
    endpoint.send("agent:bob", "Q", gather())
    data = events[-1].to_json()
    assert data["kind"] == "send"
    assert data["target"] == "agent:bob"
    assert str(data["operationId"]).startswith("col_")
    assert "reason" not in data
