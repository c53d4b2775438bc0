"""An upstream's error to ``logging/setLevel`` quoting the workspace's ``.env``.

The proxy relays ``logging/setLevel`` to every upstream with logging in one task group: one
upstream's MCP error escapes as an exception group, which the SDK logs with its traceback —
the upstream's message, the key in it, lands in the test run's captured log (printed with a
failing test, kept in JUnit XML with ``junit_logging``) — and the client is answered with code
``0`` and the task group's text. The benign twin (``test_proxy_errors``): the same
upstream's error to a read is redacted and recorded.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from mcp.shared.exceptions import MCPError
from secret_support import api_key, proxy_client, service_harness

from pytest_harness_audit.session.harness import Harness

LEAKY = str(Path(__file__).resolve().parent / "leaky_upstream.py")


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    yield from service_harness(tmp_path)


@pytest.mark.xfail(
    strict=True,
    reason="an upstream's error to logging/setLevel is logged whole with the proxy's traceback "
    "and the client gets code 0",
)
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
