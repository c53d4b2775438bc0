"""Calls whose record could not be written: a lone surrogate beside a key, a send nested deep.

A call's parameters holding a lone surrogate (what a JSON ``"\\ud800"`` escape gives) and a
workspace key were refused, but writing the record raised (the record scrubber's automaton
reads UTF-8): the call left no record and the session stayed PASS. A send whose input was
nested thousands deep raised ``RecursionError`` while its gated parameters were made, before
the gate ran: no record either. The scrubber now reads a lone surrogate as U+FFFD, and the
gated parameters of a value nested too deeply are a marker; each call is recorded (the
refused tool call judged FAIL, the send refused as invalid). The benign twins: the same
calls without a key are recorded and keep their verdict.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from secret_support import api_key, service_harness

from pytest_harness_audit.session.harness import Harness
from pytest_harness_audit.social import CollectiveError, SendError

LONE = "\ud800"


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    yield from service_harness(tmp_path, agents=("alice", "bob", "carol"))


def _tools(harness: Harness) -> list[str]:
    return [record.tool for record in harness.records]


def test_a_lone_surrogate_beside_a_key_in_a_tools_arguments_is_recorded(
    harness: Harness,
) -> None:
    harness.register_tool("mcp__notes__put", lambda params: "stored")
    call = harness.call("mcp__notes__put", note=f"{LONE} {api_key(harness)}")
    assert call.status == "blocked"
    assert _tools(harness) == ["mcp__notes__put"]
    assert harness.verdict == "FAIL"
    assert api_key(harness)[8:] not in harness.chain.path.read_text(encoding="utf-8")


def test_a_lone_surrogate_beside_a_key_in_a_send_is_recorded(harness: Harness) -> None:
    with pytest.raises(SendError):
        harness.send("agent:bob", f"{LONE} {api_key(harness)}")
    assert _tools(harness) == ["send_message"]
    assert harness.posts() == []


def _deep(depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string", "description": "name"}
    for _ in range(depth):
        schema = {"type": "object", "properties": {"x": schema}}
    return {"type": "object", "properties": {"y": schema}}


def test_a_send_nested_too_deep_is_recorded(harness: Harness) -> None:
    with pytest.raises(CollectiveError):
        harness.send(
            "agent:bob", "fill", {"op": "gather", "deadline": 60, "requestedSchema": _deep(3000)}
        )
    assert _tools(harness) == ["send_message"]
    assert harness.posts() == []


def test_benign_twins_are_recorded_and_keep_their_verdict(harness: Harness) -> None:
    harness.register_tool("mcp__notes__put", lambda params: "stored")
    assert harness.call("mcp__notes__put", note=f"{LONE} release notes").status == "success"
    with pytest.raises(SendError):
        harness.send("agent:bob", f"{LONE} hello")
    flat = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
    harness.send("agent:bob", "ok?", {"op": "gather", "deadline": 60, "requestedSchema": flat})
    assert _tools(harness) == ["mcp__notes__put", "send_message", "send_message"]
    assert harness.verdict == "PASS"
