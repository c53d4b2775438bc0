"""The send guard: one call per invocation, before anything runs; a refusal sends nothing."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from pytest_harness_audit.social import (
    ManualClock,
    SocialConfigError,
    SocialEndpoint,
    SocialEvent,
    SocialSendFailure,
    SocialToolError,
)
from pytest_harness_audit.social.errors import REFUSED_CODE

T = TypeVar("T")


class Refused(SocialSendFailure):
    """The guard's refusal."""

    def error_data(self) -> dict[str, object]:
        """``{reason: "guard-refused", detail}``."""
        return {"reason": "guard-refused", "detail": self.message}


class Guard:
    """Records each input it sees; refuses sends whose text says so."""

    def __init__(self) -> None:
        self.inputs: list[object] = []

    def __call__(self, send_input: object, send: Callable[[], T]) -> T:
        self.inputs.append(send_input)
        if isinstance(send_input, dict) and send_input.get("text") == "refuse me":
            raise Refused("refused by the guard")
        return send()


def make(
    tmp_path: Path, clock: ManualClock, events: list[SocialEvent], guard: Guard
) -> SocialEndpoint:
    return SocialEndpoint(
        tmp_path, "alice", ["bob", "carol"], clock=clock, on_event=events.append, guard=guard
    )


def test_every_entry_point_passes_the_guard_once(tmp_path: Path, clock: ManualClock) -> None:
    guard = Guard()
    events: list[SocialEvent] = []
    with make(tmp_path, clock, events, guard) as endpoint:
        endpoint.send("agent:bob", "hello")
        endpoint.send_message_text("agent:bob", "plain words")
        endpoint.mcp_send_message({"input": {"to": "agent:carol", "text": "hi"}})
        assert guard.inputs == [
            {"to": "agent:bob", "text": "hello"},
            {"to": "agent:bob", "text": "plain words"},
            {"to": "agent:carol", "text": "hi"},
        ]
        assert [event.outcome for event in events] == ["sent", "sent", "sent"]


def test_a_refusal_runs_nothing(tmp_path: Path, clock: ManualClock) -> None:
    guard = Guard()
    events: list[SocialEvent] = []
    with make(tmp_path, clock, events, guard) as endpoint:
        with pytest.raises(Refused):
            endpoint.send("agent:bob", "refuse me")
        assert endpoint.posts() == []
        assert events == []


def test_a_refusal_over_mcp_is_a_tool_error_with_its_data(
    tmp_path: Path, clock: ManualClock
) -> None:
    guard = Guard()
    with make(tmp_path, clock, [], guard) as endpoint:
        with pytest.raises(SocialToolError) as caught:
            endpoint.mcp_send_message({"input": {"to": "agent:bob", "text": "refuse me"}})
        assert caught.value.code == REFUSED_CODE
        assert caught.value.data == {
            "reason": "certification-unavailable",
            "detail": "refused by the guard",
            "harnessReason": "guard-refused",
        }


def test_the_guard_sees_a_send_before_its_options_are_checked(
    tmp_path: Path, clock: ManualClock
) -> None:
    guard = Guard()
    with make(tmp_path, clock, [], guard) as endpoint:
        with pytest.raises(SocialConfigError):
            endpoint.send("agent:bob", "hello", failure_delivery="never")  # type: ignore[arg-type]
        assert guard.inputs == [{"to": "agent:bob", "text": "hello"}]
