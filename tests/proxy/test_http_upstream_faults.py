"""An HTTP upstream that stops: clear errors, the other upstreams unaffected, back when it is."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import anyio
import pytest
from proxy_support import memory_client, test_upstream, text_of
from stub_gate import StubGate

from pytest_harness_audit.doors.proxy import (
    BackgroundProxy,
    HttpUpstream,
    LocalTool,
    RecordingProxy,
    UpstreamStartError,
)
from pytest_harness_audit.doors.proxy.reachability import describe_network_error

pytestmark = pytest.mark.anyio


ECHO = LocalTool(
    name="echo",
    description="Return the text unchanged.",
    input_schema={"type": "object", "properties": {"text": {"type": "string"}}},
    handler=lambda arguments: arguments["text"],
)


def start_front(storage: Path, *, port: int = 0, token: str | None = None) -> BackgroundProxy:
    """A real streamable-HTTP MCP server in a thread, serving an in-process ``echo``."""
    front = BackgroundProxy(
        StubGate(storage), local_tools=[ECHO], port=port, token=token, report=lambda line: None
    )
    front.start()
    return front


async def test_a_stopped_http_upstream_fails_clearly_and_serves_again_when_back(
    tmp_path: Path, gate: StubGate, reports: list[str], make_proxy: Callable[..., RecordingProxy]
) -> None:
    front = start_front(tmp_path / "front1")
    url, token = front.url, front.token
    remote = HttpUpstream(name="remote", url=url, headers=front.endpoint.headers)
    try:
        async with (
            make_proxy([remote, test_upstream("local")]) as proxy,
            memory_client(proxy) as session,
        ):
            with anyio.fail_after(20):
                assert text_of(await session.call_tool("remote__echo", {"text": "one"})) == "one"
                front.stop()
                down = await session.call_tool("remote__echo", {"text": "two"})
                still_down = await session.call_tool("remote__echo", {"text": "three"})
                # The other upstream is not affected, nor is the listing of its tools.
                assert text_of(await session.call_tool("local__echo", {"text": "here"})) == "here"
                names = [tool.name for tool in (await session.list_tools()).tools]
                assert "local__echo" in names and "remote__echo" not in names

                port = int(url.rsplit(":", 1)[1].split("/")[0])
                front = start_front(tmp_path / "front2", port=port, token=token)
                back = await session.call_tool("remote__echo", {"text": "four"})
    finally:
        front.stop()

    unreachable = f"upstream 'remote' unreachable at {url}: connection refused"
    assert (down.is_error, text_of(down)) == (True, unreachable)
    assert (still_down.is_error, text_of(still_down)) == (True, unreachable)
    assert (back.is_error, text_of(back)) == (False, "four")
    assert [(r["tool"], r["status"], r["error_message"]) for r in gate.records()] == [
        ("mcp__remote__echo", "success", None),
        ("mcp__remote__echo", "error", unreachable),
        ("mcp__remote__echo", "error", unreachable),
        ("mcp__local__echo", "success", None),
        ("mcp__remote__echo", "success", None),
    ]
    assert reports == ["harness-audit proxy: upstream 'remote' reconnected"]


async def test_an_http_upstream_that_is_not_there_at_start_is_one_clear_error(
    tmp_path: Path, make_proxy: Callable[..., RecordingProxy]
) -> None:
    front = start_front(tmp_path / "front")
    url = front.url
    front.stop()
    with pytest.raises(UpstreamStartError) as raised:
        async with make_proxy([HttpUpstream(name="remote", url=url)]):
            pass
    assert str(raised.value) == (
        f"upstream 'remote' could not be started: unreachable at {url}: connection refused"
    )


def test_network_errors_are_described_by_their_root_cause() -> None:
    refused = ConnectionRefusedError(111, "Connect call failed")
    try:
        try:
            raise refused
        except OSError as inner:
            raise OSError("All connection attempts failed") from inner
    except OSError as outer:
        assert describe_network_error(outer) == "connection refused"
    assert describe_network_error(ValueError("odd")) == "odd"
