"""Known secrets in what an upstream sends that is not a valid MCP answer.

A real upstream writing JSON-RPC by hand (``raw_upstream.py``) answers with results of the
wrong shape whose misplaced value is the workspace's ``API_KEY``, and prints the key line on
its stdout. The SDK's validation error quotes the value; the proxy relays or logs that text:
it must reach the client and the log redacted, and the exposure be judged.
"""

from __future__ import annotations

import logging
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

RAW = str(Path(__file__).resolve().parent / "raw_upstream.py")
Step = Callable[[ClientSession], Awaitable[Any]]


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    yield from service_harness(tmp_path)


def _answer(harness: Harness, step: Step) -> str:
    """What the client got for ``step`` through the session's proxy, as JSON text."""
    upstream = {"mcpServers": {"raw": {"command": sys.executable, "args": [RAW]}}}
    proxy = harness.start_proxy(upstream, workspace_tools=False)

    async def session() -> str:
        async with proxy_client(proxy) as client:
            try:
                return str((await step(client)).model_dump_json())
            except MCPError as exc:
                return str(exc.error.model_dump_json())

    return anyio.run(session)


@pytest.mark.slow
@pytest.mark.parametrize(
    "step",
    [lambda c: c.list_resources(), lambda c: c.call_tool("shape", {})],
    ids=["resources/list", "tools/call"],
)
def test_a_malformed_answer_holding_the_key_is_not_relayed_whole(
    harness: Harness, caplog: pytest.LogCaptureFixture, step: Step
) -> None:
    key = api_key(harness)
    with caplog.at_level(logging.WARNING):
        answer = _answer(harness, step)
    assert key not in answer
    assert key not in caplog.text
    assert harness.verdict == "FAIL"


@pytest.mark.slow
def test_benign_twin_a_malformed_listing_without_a_secret_is_an_error(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAW_BENIGN", "1")
    answer = _answer(harness, lambda c: c.list_resources())
    assert "harmless" in answer  # the validation error names the value
    assert harness.verdict == "PASS"


@pytest.mark.slow
def test_an_upstreams_garbled_output_is_logged_redacted(
    harness: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    key = api_key(harness)
    with caplog.at_level(logging.WARNING):
        answer = _answer(harness, lambda c: c.call_tool("garble", {}))
    assert "garbled" in answer
    assert "Failed to parse JSONRPC message" in caplog.text  # the line is still reported
    assert key not in caplog.text


@pytest.mark.slow
def test_a_malformed_tool_listing_holding_the_key_is_not_relayed_or_logged(
    harness: Harness, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAW_BAD_TOOLS", "1")
    key = api_key(harness)
    with caplog.at_level(logging.WARNING):
        answer = _answer(harness, lambda c: c.list_tools())
    assert key not in answer
    assert key not in caplog.text
