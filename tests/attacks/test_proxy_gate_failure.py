"""A call the gate fails on at the recording proxy is refused, recorded and fails the session.

The approval step reads the chain for an approver's ``terminate`` before each call and raises
when it cannot (fail closed). At the proxy that exception escaped the door seam: the official
client got a bare JSON-RPC error, nothing was recorded, and the session stayed PASS although a
call was refused for a broken gate. Now it is an ``isError`` result with the block text, a
``gate-error`` refusal in the chain, and FAIL.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from pytest_harness_audit.gate import seam
from pytest_harness_audit.gate.approvals import Approvals
from pytest_harness_audit.session.harness import Harness

Factory = Callable[..., Harness]


def _call(harness: Harness, tool: str, arguments: dict[str, Any]) -> types.CallToolResult:
    proxy = harness.start_proxy(workspace_tools=True)

    async def call() -> types.CallToolResult:
        async with (
            httpx2.AsyncClient(headers=proxy.headers) as http,
            streamable_http_client(proxy.url, http_client=http) as (read, write),
            ClientSession(read, write) as client,
        ):
            await client.initialize()
            return await client.call_tool(tool, arguments)

    return anyio.run(call)


def _text(result: types.CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))


def test_an_unreadable_chain_at_the_approval_step_refuses_and_fails(
    harness_factory: Factory, monkeypatch: pytest.MonkeyPatch
) -> None:
    harness = harness_factory("python-service", "safety")

    def unreadable(self: Approvals, chain: Any) -> str | None:
        raise PermissionError(13, "Permission denied", str(chain))

    monkeypatch.setattr(Approvals, "read_terminated", unreadable)
    result = _call(harness, "Write", {"file_path": "notes.md", "content": "x\n"})
    monkeypatch.undo()
    assert result.is_error
    assert _text(result).startswith("[blocked] [web4-policy] internal gate error, refused:")
    assert not (harness.root / "notes.md").exists()
    # the chain could not take the refusal either: the session's chain faults fail it
    assert harness.calls() == []
    assert harness.verdict.name == "FAIL"


def test_an_approval_step_that_raises_is_a_recorded_refusal(
    harness_factory: Factory, monkeypatch: pytest.MonkeyPatch
) -> None:
    harness = harness_factory("python-service", "safety")

    async def broken(gate: Any, decision: Any) -> Any:
        raise RuntimeError("approval service unreachable")

    monkeypatch.setattr(seam, "approve_async", broken)
    result = _call(harness, "Write", {"file_path": "notes.md", "content": "x\n"})
    monkeypatch.undo()
    assert result.is_error
    assert "internal gate error, refused: RuntimeError: approval service" in _text(result)
    assert not (harness.root / "notes.md").exists()
    [call] = harness.calls()
    assert (call.tool, call.status, call.rule_id) == ("Write", "blocked", "gate-error")
    assert harness.verdict.name == "FAIL"


def test_an_ordinary_call_and_an_upstream_style_error_keep_their_answers(
    harness_factory: Factory,
) -> None:
    harness = harness_factory("python-service", "safety")
    result = _call(harness, "Read", {"file_path": "README.md"})
    assert not result.is_error
    missing = _call(harness, "Read", {"file_path": "no-such-file.md"})
    assert missing.is_error  # the tool's own error: recorded as an error, not a gate failure
    assert [(c.tool, c.status) for c in harness.calls()] == [
        ("Read", "success"),
        ("Read", "error"),
    ]
    assert harness.verdict.name == "PASS"
