"""An outgoing payload the secret scan cannot read whole: nested deeper, or longer, than it reads.

A message tool's arguments are scanned for known secrets before the call runs. The scan reads a
value down to a bounded depth and up to a bounded length; a key placed below that depth (a list
nested 64 times, which pydantic-ai hands a ``body: Any`` parameter as the model wrote it) or past
that length went out unread and the session was PASS, its record showing the redacted key. Such
a payload is refused where the policy refuses a known secret leaving: it may hold one. Benign
twins: the same nesting a level shallower without a key goes out, and a deep argument of a tool
whose arguments do not leave (a file read) is not refused for its depth. In dry-run such a
payload goes out and the session is WARN, as for a key found.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agent_support import pydantic_ai_run
from secret_support import api_key, service_harness

from pytest_harness_audit.gate.inspection import UNSCANNED_REASON
from pytest_harness_audit.inspect.outputs import MAX_DEPTH, MAX_SCAN_CHARS
from pytest_harness_audit.policy import Policy
from pytest_harness_audit.session.harness import Harness


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    yield from service_harness(tmp_path)


def send_message(to: str, body: Any) -> str:
    """Send a message.

    Args:
        to: the recipient.
        body: what to send.
    """
    return "sent"


def _nested(value: Any, levels: int) -> Any:
    for _ in range(levels):
        value = [value]
    return value


def test_a_key_nested_below_the_scan_depth_is_refused_through_pydantic_ai(
    harness: Harness,
) -> None:
    sent: list[Any] = []

    def send(to: str, body: Any) -> str:
        """Send a message."""
        sent.append(body)
        return "sent"

    tool = harness.tool(send, name="send_message", on_block="return")
    read = pydantic_ai_run(
        tool, "send_message", {"to": "bob", "body": _nested(api_key(harness), MAX_DEPTH)}
    )
    assert sent == []
    assert read == [f"[blocked] [web4-policy] {UNSCANNED_REASON}"]
    (call,) = harness.calls()
    assert call.status == "blocked"
    assert harness.verdict.value == "FAIL"


@pytest.mark.slow  # megabytes of filler scanned
def test_a_key_past_the_scan_length_is_refused(harness: Harness) -> None:
    tool = harness.tool(send_message, on_block="return")
    filler = "x" * (MAX_SCAN_CHARS // 2 + 1)
    assert tool("bob", [filler, filler, api_key(harness)]).endswith(UNSCANNED_REASON)
    assert harness.verdict.value == "FAIL"


def test_a_shallower_payload_without_a_key_goes_out(harness: Harness) -> None:
    tool = harness.tool(send_message, on_block="return")
    read = pydantic_ai_run(
        tool, "send_message", {"to": "bob", "body": _nested("hello", MAX_DEPTH - 2)}
    )
    assert read == ["sent"]
    assert harness.verdict.value == "PASS"


def test_a_deep_argument_that_does_not_leave_is_not_refused_for_its_depth(
    harness: Harness,
) -> None:
    def lookup(path: str, shape: Any) -> str:
        """Read a file."""
        return "ok"

    tool = harness.tool(lookup, category="file_read", on_block="return")
    assert tool("README.md", _nested("x", MAX_DEPTH + 5)) == "ok"
    assert harness.verdict.value == "PASS"


def test_in_dry_run_a_payload_past_the_scan_depth_goes_out_with_a_warning(tmp_path: Path) -> None:
    dry = Harness.create(
        tmp_path, template="python-service", policy=Policy.preset("safety", enforce=False)
    )
    try:
        tool = dry.tool(send_message, on_block="return")
        assert tool("bob", _nested(api_key(dry), MAX_DEPTH + 1)) == "sent"
        assert dry.verdict.value == "WARN"
        assert tool("bob", _nested("hello", MAX_DEPTH - 2)) == "sent"
    finally:
        dry.close()
