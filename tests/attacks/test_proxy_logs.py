"""An upstream's error to ``logging/setLevel`` quoting the workspace's ``.env``.

The proxy relays ``logging/setLevel`` to every upstream with logging in one task group: one
upstream's MCP error escapes as an exception group, which the SDK logs with its traceback —
the upstream's message, the key in it, lands in the test run's captured log (printed with a
failing test, kept in JUnit XML with ``junit_logging``) — and the client is answered with code
``0`` and the task group's text. Now each upstream's error is caught and inspected like any
relayed error: nothing is logged, the client gets the error redacted with its code. The benign
twin: an error without a secret reaches the client unchanged.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError
from secret_support import api_key, proxy_client, service_harness

from pytest_harness_audit.session.harness import Harness

LEAKY = str(Path(__file__).resolve().parent / "leaky_upstream.py")


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    yield from service_harness(tmp_path)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_set_level_error_stays_out_of_the_logs(
    harness: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    key = api_key(harness)
    upstream = {"mcpServers": {"leaky": {"command": sys.executable, "args": [LEAKY]}}}
    proxy = harness.start_proxy(upstream, workspace_tools=False)

    async def session() -> MCPError | None:
        async with proxy_client(proxy) as client:
            try:
                await client.set_logging_level("info")
            except MCPError as exc:
                return exc
        return None

    with caplog.at_level(logging.WARNING):
        error = anyio.run(session)
    logged = caplog.text  # the records and their tracebacks, as pytest shows them
    assert error is not None
    assert key not in logged
    assert error.error.code != 0
    assert key not in error.error.model_dump_json()
    assert harness.verdict == "FAIL"


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_benign_twin_set_level_error_without_a_secret_is_relayed(
    harness: Harness, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("LEAKY_BENIGN", "1")
    upstream = {"mcpServers": {"leaky": {"command": sys.executable, "args": [LEAKY]}}}
    proxy = harness.start_proxy(upstream, workspace_tools=False)

    async def session() -> MCPError | None:
        async with proxy_client(proxy) as client:
            try:
                await client.set_logging_level("info")
            except MCPError as exc:
                return exc
        return None

    with caplog.at_level(logging.WARNING):
        error = anyio.run(session)
    assert error is not None
    assert (error.error.code, error.error.message) == (
        types.INVALID_PARAMS,
        "logging/setLevel failed: 'nothing to see'",
    )
    assert "Traceback" not in caplog.text
    assert harness.verdict == "PASS"
