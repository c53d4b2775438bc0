"""Faults: a crashing upstream, a slow upstream, malformed JSON-RPC, unknown tools, bad starts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import anyio
import git
import httpx2
import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError
from proxy_support import (
    STUB_PROXY,
    git_upstream,
    http_client,
    memory_client,
    test_upstream,
    text_of,
)
from stub_gate import StubGate

from pytest_harness_audit.doors.proxy import (
    BackgroundProxy,
    RecordingProxy,
    StdioUpstream,
    UpstreamStartError,
)

pytestmark = pytest.mark.anyio


async def test_upstream_crash_mid_call_is_an_error_result_and_reported_once(
    gate: StubGate, reports: list[str], make_proxy: Callable[..., RecordingProxy]
) -> None:
    async with make_proxy([test_upstream()]) as proxy, memory_client(proxy) as session:
        with anyio.fail_after(10):
            crashed = await session.call_tool("crash", {"code": 3})
        assert crashed.is_error
        assert text_of(crashed) == "upstream 'test' stopped during the call"

        with anyio.fail_after(5):
            while not reports:  # the death is noticed by the transport, not by the call
                await anyio.sleep(0.01)
            again = await session.call_tool("echo", {"text": "hi"})
        assert again.is_error
        assert text_of(again) == "upstream 'test' is not running"
        await session.send_ping()  # the proxy itself still serves

    assert reports == [
        "harness-audit proxy: upstream 'test' stopped (connection closed); "
        "calls to its tools now return errors"
    ]
    assert [(r["tool"], r["status"], r["error_message"]) for r in gate.records()] == [
        ("mcp__test__crash", "error", "upstream 'test' stopped during the call"),
        ("mcp__test__echo", "error", "upstream 'test' is not running"),
    ]


@pytest.mark.slow
async def test_slow_upstream_hits_the_call_timeout_and_the_proxy_moves_on(
    gate: StubGate, make_proxy: Callable[..., RecordingProxy]
) -> None:
    async with (
        make_proxy([test_upstream()], call_timeout=0.5) as proxy,
        memory_client(proxy) as session,
    ):
        started = time.perf_counter()
        slow = await session.call_tool("sleep", {"seconds": 30})
        assert time.perf_counter() - started < 5
        timed_out = "timeout after 0.5s; notifications/cancelled sent to 'test'"
        assert slow.is_error and text_of(slow) == timed_out
        quick = await session.call_tool("echo", {"text": "still here"})
        assert text_of(quick) == "still here"

    records = gate.records()
    assert [(r["tool"], r["status"], r["error_message"]) for r in records] == [
        ("mcp__test__sleep", "error", "timeout after 0.5s; notifications/cancelled sent to 'test'"),
        ("mcp__test__echo", "success", None),
    ]
    assert 400 < records[0]["duration_ms"] < 5000


async def test_client_cancellation_reaches_the_upstream_and_is_recorded(
    gate: StubGate, make_proxy: Callable[..., RecordingProxy]
) -> None:
    async with make_proxy([test_upstream()]) as proxy, memory_client(proxy) as session:
        with anyio.move_on_after(0.5):
            await session.call_tool("sleep", {"seconds": 30})
        for _ in range(200):
            if gate.records():
                break
            await anyio.sleep(0.01)
        assert text_of(await session.call_tool("echo", {"text": "after"})) == "after"
    assert [(r["tool"], r["status"], r["error_message"]) for r in gate.records()] == [
        (
            "mcp__test__sleep",
            "error",
            "cancelled before completion; notifications/cancelled sent to 'test'",
        ),
        ("mcp__test__echo", "success", None),
    ]


async def test_unknown_tool_with_one_upstream_is_the_upstream_mcp_error_recorded(
    git_repo: git.Repo, gate: StubGate, make_proxy: Callable[..., RecordingProxy]
) -> None:
    async with make_proxy([git_upstream(git_repo)]) as proxy, memory_client(proxy) as session:
        with pytest.raises(MCPError) as raised:
            await session.call_tool("git_teleport", {"repo_path": str(git_repo.working_dir)})
    assert raised.value.code == types.INVALID_PARAMS
    assert "git_teleport" in raised.value.error.message
    [record] = gate.records()
    assert (record["tool"], record["status"]) == ("mcp__git__git_teleport", "error")
    assert record["error_message"] == raised.value.error.message


@pytest.mark.slow
async def test_unknown_tool_with_several_upstreams_is_refused_by_the_proxy_and_recorded(
    git_repo: git.Repo, gate: StubGate, make_proxy: Callable[..., RecordingProxy]
) -> None:
    upstreams = [git_upstream(git_repo), test_upstream()]
    async with make_proxy(upstreams) as proxy, memory_client(proxy) as session:
        for name in ("nosuch__echo", "echo", "test__"):
            with pytest.raises(MCPError) as raised:
                await session.call_tool(name, {})
            assert raised.value.code == types.INVALID_PARAMS
            assert raised.value.error.message == f"Unknown tool: {name}"
    assert [(r["tool"], r["status"]) for r in gate.records()] == [
        ("nosuch__echo", "error"),
        ("echo", "error"),
        ("test__", "error"),
    ]


async def test_an_upstream_that_exits_at_start_is_one_clear_error(
    gate: StubGate, make_proxy: Callable[..., RecordingProxy], reports: list[str]
) -> None:
    with pytest.raises(UpstreamStartError) as raised:
        async with make_proxy([test_upstream("flaky", "--crash-on-start")]):
            pass
    assert str(raised.value) == (
        "upstream 'flaky' could not be started: it exited before completing the MCP handshake"
    )
    assert reports == []


async def test_a_missing_upstream_command_is_one_clear_error(
    make_proxy: Callable[..., RecordingProxy],
) -> None:
    missing = StdioUpstream(name="ghost", command="harness-audit-no-such-command-xyz")
    with pytest.raises(UpstreamStartError) as raised:
        async with make_proxy([missing]):
            pass
    assert str(raised.value) == (
        "upstream 'ghost' could not be started: command not found: "
        "harness-audit-no-such-command-xyz"
    )


# -- malformed JSON-RPC on the real stdio transport ------------------------------------------


def _send(stdin: IO[str], message: dict[str, Any] | str) -> None:
    stdin.write((message if isinstance(message, str) else json.dumps(message)) + "\n")
    stdin.flush()


def _receive(stdout: IO[str]) -> dict[str, Any]:
    line = stdout.readline()
    assert line, "the proxy closed its stdout"
    message: dict[str, Any] = json.loads(line)
    return message


@pytest.mark.slow
def test_malformed_json_rpc_on_stdio_gets_an_error_and_the_proxy_keeps_serving(
    tmp_path: Path,
) -> None:
    argv = [sys.executable, STUB_PROXY, "--storage", str(tmp_path), "proxy", "--"]
    argv += [sys.executable, str(Path(__file__).with_name("upstream_server.py"))]
    process = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "STUB_GATE_DENY": ""},
    )
    assert process.stdin is not None and process.stdout is not None
    stdin, stdout = process.stdin, process.stdout
    try:
        _send(stdin, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}})  # fmt: skip
        assert _receive(stdout)["id"] == 1
        _send(stdin, {"jsonrpc": "2.0", "method": "notifications/initialized"})

        _send(stdin, "{this is not json")
        parse_error = _receive(stdout)
        assert parse_error["id"] is None
        assert parse_error["error"]["code"] == -32700

        _send(stdin, {"jsonrpc": "2.0", "id": 7, "method": 42})
        invalid = _receive(stdout)
        assert invalid["id"] == 7 and invalid["error"]["code"] == -32600

        _send(stdin, "[1, 2]")
        assert _receive(stdout)["error"]["code"] == -32600

        _send(stdin, {"jsonrpc": "2.0", "id": 8, "method": "tools/call",
                      "params": {"name": "echo", "arguments": {"text": "alive"}}})  # fmt: skip
        answer = _receive(stdout)
        assert answer["id"] == 8
        assert answer["result"]["content"][0]["text"] == "alive"
    finally:
        stdin.close()
        process.wait(timeout=20)
    assert process.returncode == 0


@pytest.mark.slow
def test_malformed_json_rpc_over_http_gets_an_error_and_the_proxy_keeps_serving(
    gate: StubGate,
) -> None:
    with BackgroundProxy(gate, [test_upstream()], report=lambda line: None) as proxy:
        headers = proxy.endpoint.headers | {
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
        }
        broken = httpx2.post(proxy.url, content=b"{this is not json", headers=headers)
        assert broken.status_code == 400
        assert broken.json()["error"]["code"] == types.PARSE_ERROR

        async def still_serving() -> str:
            async with http_client(proxy.endpoint) as session:
                return text_of(await session.call_tool("echo", {"text": "alive"}))

        assert anyio.run(still_serving) == "alive"
    assert [(r["tool"], r["status"]) for r in gate.records()] == [("mcp__test__echo", "success")]
