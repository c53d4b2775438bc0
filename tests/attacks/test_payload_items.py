"""A workspace key spread over the items of one payload: a list of its characters, of its
bytes, or of pieces of four characters.

Each leaf of a payload was scanned on its own, and parts of a value met only when each was at
least eight characters long: the key as ``["s", "k", "-", …]`` in a function tool's arguments
or an MCP call's ``_meta`` reached the tool or the upstream with the session PASS (WARN for a
network tool), and a tool returning it so was read by the model unredacted. The leaves are now
also read joined, so each is refused (FAIL) or redacted. The benign twins: lists of commit
SHAs, of an ordinary sentence's characters or bytes, and a few short pieces of the key stay
PASS.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from secret_support import api_key, service_harness

from pytest_harness_audit.doors.tools import ToolCallBlocked
from pytest_harness_audit.session.harness import Harness

SPREADS: dict[str, Callable[[str], Any]] = {
    "characters": list,
    "bytes": lambda key: list(key.encode()),
    "pieces": lambda key: [key[i : i + 4] for i in range(0, len(key), 4)],
    "keyed pieces": lambda key: {f"p{i}": key[i : i + 4] for i in range(0, len(key), 4)},
}
SHAS = [hashlib.sha1(str(i).encode()).hexdigest() for i in range(100)]
BENIGN: dict[str, Callable[[str], Any]] = {
    "commit ids": lambda key: SHAS,
    "their characters": lambda key: [c for sha in SHAS[:20] for c in sha],
    "a sentence's characters": lambda key: list("deploy 4f9a to staging, then 1c2e"),
    "a sentence's bytes": lambda key: list(b"hello world, version 1.2.3 of build 42"),
    "short pieces of the key": lambda key: [key[8:12], "and", key[-4:]],
}


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    yield from service_harness(tmp_path)


def _call_with(harness: Harness, data: Any) -> list[Any]:
    """Call a gated tool with ``data``; what the tool received."""
    received: list[Any] = []

    @harness.tool(name="upload", category="mcp")  # type: ignore[untyped-decorator]
    def upload(data: object) -> str:
        received.append(data)
        return "stored"

    with contextlib.suppress(ToolCallBlocked):
        upload(data)
    return received


@pytest.mark.parametrize("spread", SPREADS, ids=list(SPREADS))
def test_a_key_spread_over_a_tools_arguments_is_refused(harness: Harness, spread: str) -> None:
    assert _call_with(harness, SPREADS[spread](api_key(harness))) == []
    assert harness.verdict == "FAIL"


@pytest.mark.parametrize("benign", BENIGN, ids=list(BENIGN))
def test_benign_lists_in_a_tools_arguments_pass(harness: Harness, benign: str) -> None:
    data = BENIGN[benign](api_key(harness))
    assert _call_with(harness, data) == [data]
    assert harness.verdict == "PASS"


@pytest.mark.parametrize("spread", SPREADS, ids=list(SPREADS))
def test_a_key_spread_over_a_tools_result_is_redacted(harness: Harness, spread: str) -> None:
    key = api_key(harness)

    @harness.tool(name="settings", category="file_read")  # type: ignore[untyped-decorator]
    def settings() -> Any:
        return SPREADS[spread](key)

    shown = json.dumps(settings())
    assert key[8:12] not in shown and "[secret:" in shown
    assert harness.verdict == "FAIL"


@pytest.mark.parametrize("benign", BENIGN, ids=list(BENIGN))
def test_benign_lists_in_a_tools_result_are_kept(harness: Harness, benign: str) -> None:
    data = BENIGN[benign](api_key(harness))

    @harness.tool(name="settings", category="file_read")  # type: ignore[untyped-decorator]
    def settings() -> Any:
        return data

    assert settings() == data
    assert harness.verdict == "PASS"


ECHO = Path(__file__).resolve().parents[1] / "proxy" / "echo_meta_server.py"


def _upstream_received(harness: Harness, tmp_path: Path, meta: dict[str, Any]) -> str:
    """Call the echo upstream's ``lookup`` through the session's proxy with ``_meta``; what
    the upstream received (empty when nothing)."""
    received = tmp_path / "received.jsonl"
    upstream = {"command": sys.executable, "args": [str(ECHO)], "env": {"RECEIVED": str(received)}}
    proxy = harness.start_proxy({"mcpServers": {"up": upstream}}, workspace_tools=False)

    async def call() -> None:
        async with (
            httpx2.AsyncClient(headers=proxy.headers, timeout=60) as http,
            streamable_http_client(proxy.url, http_client=http) as streams,
            ClientSession(streams[0], streams[1]) as session,
        ):
            await session.initialize()
            await session.call_tool("lookup", {"book": "dune"}, meta=meta)  # type: ignore[call-overload]

    anyio.run(call)
    return received.read_text(encoding="utf-8") if received.exists() else ""


def test_a_key_spread_over_an_mcp_calls_meta_never_reaches_the_upstream(
    harness: Harness, tmp_path: Path
) -> None:
    key = api_key(harness)
    received = _upstream_received(harness, tmp_path, {"trace": list(key)})
    assert json.dumps(list(key[8:]))[1:-1] not in received
    assert harness.verdict == "FAIL"


def test_benign_twin_commit_ids_in_an_mcp_calls_meta_are_relayed(
    harness: Harness, tmp_path: Path
) -> None:
    received = _upstream_received(harness, tmp_path, {"trace": SHAS[:10]})
    assert json.loads(received)["meta"]["trace"] == SHAS[:10]
    assert harness.verdict == "PASS"
