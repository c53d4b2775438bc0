"""What an upstream tells the client beside a call's result is checked for known secrets.

A call's progress messages and an upstream's log notifications reach the client (its host may
show them to the model, or keep them in its logs) without passing through a result the gate
inspects. One holding a known secret of the workspace is not relayed whole: a progress
notification goes on without its message, a log notification is withheld, and the refusal is a
blocked ``mcp__<server>__notifications/…`` record that FAILs the session. Ordinary progress and
log messages reach the client as before, unrecorded.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from secret_support import api_key, proxy_client, service_harness

from pytest_harness_audit.session.harness import Harness

NOTIFYING_SERVER = str(Path(__file__).resolve().parent / "notifying_server.py")
UPSTREAM = {"mcpServers": {"notes": {"command": sys.executable, "args": [NOTIFYING_SERVER]}}}

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    yield from service_harness(tmp_path)


def _heard(harness: Harness, tool: str, env: bool) -> list[Any]:
    """What the client hears during and after calling ``tool``: progress and log messages."""
    proxy = harness.start_proxy(UPSTREAM, workspace_tools=False)
    heard: list[Any] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        heard.append(("log", params.data))

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        heard.append(("progress", done, message))

    async def session() -> None:
        async with proxy_client(proxy, logging_callback=on_log) as client:
            result = await client.call_tool(tool, {"env": env}, progress_callback=on_progress)
            assert not result.is_error
            await anyio.sleep(0.3)  # a log notification travels apart from the result

    anyio.run(session)
    return heard


def test_a_progress_message_holding_a_secret_goes_on_without_it(harness: Harness) -> None:
    key = api_key(harness)
    heard = _heard(harness, "progress", env=True)
    assert heard == [("progress", 1, None), ("progress", 2, "finished")]
    assert harness.verdict == "FAIL"
    statuses = [(call.tool, call.status) for call in harness.calls()]
    assert ("mcp__notes__notifications/progress", "blocked") in statuses
    assert ("mcp__notes__progress", "success") in statuses
    assert key not in harness.chain.path.read_text(encoding="utf-8")


def test_a_log_message_holding_a_secret_is_withheld(harness: Harness) -> None:
    key = api_key(harness)
    heard = _heard(harness, "log", env=True)
    assert heard == []
    assert harness.verdict == "FAIL"
    statuses = [(call.tool, call.status) for call in harness.calls()]
    assert ("mcp__notes__notifications/message", "blocked") in statuses
    assert key not in harness.chain.path.read_text(encoding="utf-8")


@pytest.mark.slow
def test_ordinary_progress_and_log_messages_reach_the_client(harness: Harness) -> None:
    heard = _heard(harness, "progress", env=False)
    heard += _heard(harness, "log", env=False)
    assert heard == [
        ("progress", 1, "reading the settings"),
        ("progress", 2, "finished"),
        ("log", "reading the settings"),
    ]
    assert [call.tool for call in harness.calls()] == ["mcp__notes__progress", "mcp__notes__log"]
    assert harness.verdict == "PASS"
