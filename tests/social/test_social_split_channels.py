"""A workspace secret split between a message and an upstream tool call, through the proxy.

The agent sends one half with ``send_message`` and the other as the argument of a real
upstream's tool (or the other way round): each half alone is no known form of the secret, but
the firewall's guard and the outgoing-payload inspection read one memory of fragments, so the
second part is refused and the session FAILs. Ordinary traffic on both channels still PASSes.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError
from secret_support import api_key, proxy_client, service_harness

from pytest_harness_audit.session.harness import Harness

LIBRARY = Path(__file__).resolve().parents[1] / "proxy" / "library_server.py"
Step = Callable[[ClientSession], Awaitable[str]]


def _library() -> dict[str, Any]:
    return {"mcpServers": {"lib": {"command": sys.executable, "args": [str(LIBRARY)]}}}


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    yield from service_harness(tmp_path, agents=("alice", "bob", "carol"))


def _send(text: str) -> Step:
    async def step(session: ClientSession) -> str:
        try:
            result = await session.call_tool(
                "send_message", {"input": {"to": "agent:bob", "text": text}}
            )
        except MCPError as refused:
            return f"refused: {refused}"
        return "error" if result.is_error else "sent"

    return step


def _lookup(book: str) -> Step:
    async def step(session: ClientSession) -> str:
        result = await session.call_tool("lookup", {"book": book})
        text = "".join(getattr(block, "text", "") for block in result.content)
        return f"blocked: {text}" if result.is_error else "looked up"

    return step


def _run(harness: Harness, steps: list[Step]) -> list[str]:
    proxy = harness.start_proxy(_library(), workspace_tools=False, social=True)

    async def session() -> list[str]:
        async with proxy_client(proxy) as client:
            return [await step(client) for step in steps]

    return anyio.run(session)


def test_a_tool_argument_then_a_message_with_the_rest_is_refused(harness: Harness) -> None:
    key = api_key(harness)
    half = len(key) // 2
    looked, sent = _run(harness, [_lookup(key[:half]), _send(f"the rest is {key[half:]}")])
    assert looked == "looked up"  # half a key is no known form of it
    assert sent.startswith("refused: send refused") and key[half:] not in sent
    assert harness.verdict == "FAIL"


@pytest.mark.slow
def test_a_message_then_a_tool_argument_with_the_rest_is_blocked(harness: Harness) -> None:
    key = api_key(harness)
    half = len(key) // 2
    sent, looked = _run(harness, [_send(f"part one {key[:half]}"), _lookup(key[half:])])
    assert sent == "sent"
    assert looked.startswith("blocked: [blocked]")
    assert harness.verdict == "FAIL"
    assert key[half:] not in harness.chain.path.read_text(encoding="utf-8")


@pytest.mark.slow
def test_ordinary_lookups_and_messages_pass(harness: Harness) -> None:
    steps = [_lookup("dune"), _send("the API_KEY is in .env, ask ops"), _lookup("emma")]
    assert _run(harness, steps) == ["looked up", "sent", "looked up"]
    assert harness.verdict == "PASS"
