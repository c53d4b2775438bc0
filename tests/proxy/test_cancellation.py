"""A call the client cancels or abandons: the chain and the workspace agree.

A cancelled ``Bash`` call is stopped (its whole process group ended) and recorded with what it
did up to then; a cancelled upstream call is cancelled upstream too; a call whose connection
merely drops on the handshake-era wire runs to its end and is recorded then.
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from proxy_support import http_client, memory_client, serving_http, test_upstream, text_of
from stub_gate import StubGate

from pytest_harness_audit.audit import iter_records
from pytest_harness_audit.doors.proxy import (
    HttpEndpoint,
    LocalTool,
    RecordingProxy,
    proxy_command,
)
from pytest_harness_audit.doors.proxy import local_tools as local_tools_module
from pytest_harness_audit.doors.proxy.workspace_tools import workspace_tools
from pytest_harness_audit.session.harness import Harness

pytestmark = pytest.mark.anyio

#: A command that begins, then outlasts every timeout below by seconds. The margins are wide: on a
#: loaded machine the call's gate and its shell may take more than a second to start.
SLOW_WRITE = "echo begun > began.txt; sleep 8; echo done > slept.txt"
#: The client's patience with a call, well after ``began.txt`` is written and well before the
#: command's end.
PATIENCE = 3
#: When the command would have written ``slept.txt`` had it run on, with a margin.
PAST_THE_END = 9.5
STOPPED = "cancelled before completion; Bash: command stopped, its process group was ended"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def ws_gate(tmp_path: Path) -> StubGate:
    return StubGate(tmp_path / "ws-storage")


def _ws_proxy(gate: StubGate, root: Path, **options: Any) -> RecordingProxy:
    return RecordingProxy(
        gate, [], local_tools=workspace_tools(root), report=lambda _: None, **options
    )


async def _sleep_until(deadline: float) -> None:
    await anyio.sleep(max(0.0, deadline - time.monotonic()))


async def _records(gate: StubGate, count: int = 1) -> list[dict[str, Any]]:
    with anyio.fail_after(15):
        while len(gate.records()) < count:
            await anyio.sleep(0.02)
    return gate.records()


# -- the abandoned call of issue 16, end to end -------------------------------------------------


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    session = Harness.create(tmp_path / "s", template="python-service", policy="safety")
    try:
        yield session
    finally:
        session.close()


async def _call_with_read_timeout(url: str, headers: dict[str, str], command: str) -> str:
    async with (
        httpx2.AsyncClient(headers=headers) as http,
        streamable_http_client(url, http_client=http) as (read, write),
    ):
        from mcp.client.session import ClientSession

        async with ClientSession(read, write, read_timeout_seconds=PATIENCE) as session:
            await session.initialize()
            with pytest.raises(MCPError) as raised:
                await session.call_tool("Bash", {"command": command})
            return raised.value.error.message


@pytest.mark.slow
def test_a_call_the_client_abandons_is_stopped_and_recorded_with_its_effects(
    harness: Harness,
) -> None:
    proxy = harness.start_proxy()
    started = time.monotonic()
    message = anyio.run(_call_with_read_timeout, proxy.url, proxy.headers, SLOW_WRITE)
    assert "timed out" in message
    time.sleep(max(0.0, started + PAST_THE_END - time.monotonic()))

    assert not (harness.root / "slept.txt").exists()  # the command did not run on
    assert (harness.root / "began.txt").read_text() == "begun\n"
    [call] = harness.calls()
    assert (call.tool, call.status) == ("Bash", "error")
    assert call.raw["result"]["errorMessage"] == STOPPED
    # what it did up to then: the record's effects are the workspace's
    assert call.raw["effects"] == {"created": ["began.txt"]}


@pytest.mark.slow
async def test_the_2026_wire_closing_the_response_stream_stops_the_call(
    ws_gate: StubGate, workspace: Path
) -> None:
    endpoints: list[HttpEndpoint] = []
    async with _ws_proxy(ws_gate, workspace) as proxy, serving_http(proxy, endpoints.append):
        endpoint = endpoints[0]
        started = time.monotonic()
        async with (
            httpx2.AsyncClient(headers=endpoint.headers) as http,
            Client(
                streamable_http_client(endpoint.url, http_client=http),
                mode="2026-07-28",
                read_timeout_seconds=PATIENCE,
            ) as client,
        ):
            with pytest.raises(MCPError):
                await client.call_tool("Bash", {"command": SLOW_WRITE})
        [record] = await _records(ws_gate)
        await _sleep_until(started + PAST_THE_END)
    assert not (workspace / "slept.txt").exists()
    assert (record["status"], record["error_message"]) == ("error", STOPPED)


# -- what a command does to outlive its call ---------------------------------------------------

LATE = "sleep 2; echo x > late.txt"


@pytest.mark.slow
@pytest.mark.parametrize(
    "command",
    [
        pytest.param(f"({LATE}) & sleep 30", id="background-subshell"),
        pytest.param(f"nohup bash -c '{LATE}' >/dev/null 2>&1 & sleep 30", id="nohup"),
        pytest.param(f"trap '' TERM; (trap '' TERM; {LATE}) & sleep 30", id="ignores-sigterm"),
        pytest.param(f"({LATE}) & disown; sleep 30", id="disowned"),
    ],
)
async def test_descendants_of_a_cancelled_call_are_ended_too(
    ws_gate: StubGate, workspace: Path, command: str
) -> None:
    started = time.monotonic()
    async with _ws_proxy(ws_gate, workspace) as proxy, memory_client(proxy) as session:
        with anyio.move_on_after(0.5):  # the client cancels: notifications/cancelled
            await session.call_tool("Bash", {"command": command})
        [record] = await _records(ws_gate)
    await _sleep_until(started + 3)
    assert not (workspace / "late.txt").exists()
    assert (record["status"], record["error_message"]) == ("error", STOPPED)


# -- explicit cancellation and a dropped connection, on the wire --------------------------------

_JSON = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
_VERSION = "2025-06-18"


async def _legacy_session(http: httpx2.AsyncClient, url: str) -> dict[str, str]:
    """Handshake on the 2025 wire; the headers of the session's later requests."""
    hello = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": _VERSION,
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"},
        },
    }
    answer = await http.post(url, json=hello)
    assert answer.status_code == 200, answer.text
    headers = {"mcp-session-id": answer.headers["mcp-session-id"], "mcp-protocol-version": _VERSION}
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await http.post(url, headers=headers, json=note)).status_code == 202
    return headers


def _bash_call(request_id: int, command: str) -> dict[str, Any]:
    params = {"name": "Bash", "arguments": {"command": command}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


@pytest.mark.slow
async def test_an_explicit_notifications_cancelled_stops_the_call(
    ws_gate: StubGate, workspace: Path
) -> None:
    endpoints: list[HttpEndpoint] = []
    answers: list[str] = []
    started = time.monotonic()
    async with _ws_proxy(ws_gate, workspace) as proxy, serving_http(proxy, endpoints.append):
        url = endpoints[0].url
        async with httpx2.AsyncClient(
            headers={**endpoints[0].headers, **_JSON}, timeout=30
        ) as http:
            session = await _legacy_session(http, url)

            async def call() -> None:
                answer = await http.post(url, headers=session, json=_bash_call(7, SLOW_WRITE))
                answers.append(answer.text)

            async with anyio.create_task_group() as group:
                group.start_soon(call)
                await anyio.sleep(PATIENCE)
                cancel = {
                    "jsonrpc": "2.0",
                    "method": "notifications/cancelled",
                    "params": {"requestId": 7, "reason": "the user changed their mind"},
                }
                assert (await http.post(url, headers=session, json=cancel)).status_code == 202
        [record] = await _records(ws_gate)
        await _sleep_until(started + PAST_THE_END)
    assert not (workspace / "slept.txt").exists()
    assert (workspace / "began.txt").exists()
    assert (record["status"], record["error_message"]) == ("error", STOPPED)
    assert "Request cancelled" in answers[0]


@pytest.mark.slow
async def test_a_dropped_connection_on_the_2025_wire_runs_on_and_is_recorded_when_done(
    ws_gate: StubGate, workspace: Path
) -> None:
    # On this wire a dropped connection is not a cancellation (the client may resume): the call
    # runs to its end, and only then is it recorded, as it really ended.
    endpoints: list[HttpEndpoint] = []
    async with _ws_proxy(ws_gate, workspace) as proxy, serving_http(proxy, endpoints.append):
        url = endpoints[0].url
        headers = {**endpoints[0].headers, **_JSON}
        async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
            session = await _legacy_session(http, url)
            async with httpx2.AsyncClient(headers={**headers, **session}, timeout=30) as other:
                with anyio.move_on_after(PATIENCE):
                    async with other.stream("POST", url, json=_bash_call(3, SLOW_WRITE)) as reply:
                        async for _ in reply.aiter_bytes():
                            pass
            assert ws_gate.records() == []  # not recorded while it still runs
            [record] = await _records(ws_gate)
    assert (workspace / "slept.txt").read_text() == "done\n"
    assert (record["status"], record["error_message"]) == ("success", None)


@pytest.mark.slow
async def test_the_call_timeout_stops_the_command_too(ws_gate: StubGate, workspace: Path) -> None:
    started = time.monotonic()
    async with (
        _ws_proxy(ws_gate, workspace, call_timeout=0.5) as proxy,
        memory_client(proxy) as session,
    ):
        result = await session.call_tool("Bash", {"command": "echo partial; sleep 2; touch t"})
    await _sleep_until(started + 3)
    assert not (workspace / "t").exists()
    message = "timeout after 0.5s; Bash: command stopped, its process group was ended"
    assert result.is_error and text_of(result) == message
    [record] = ws_gate.records()
    assert record["error_message"] == message
    assert "partial" in str(record["output"])  # its output up to the stop


@pytest.mark.slow
def test_a_stdio_client_that_goes_away_mid_call_leaves_no_command_running(
    tmp_path: Path, workspace: Path
) -> None:
    storage = tmp_path / "storage"
    argv = proxy_command(storage=storage, session="s", preset="permissive", workspace=workspace)
    process = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert process.stdin is not None and process.stdout is not None
    started = time.monotonic()
    try:
        hello = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": _VERSION,
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"},
            },
        }
        for message in (hello, {"jsonrpc": "2.0", "method": "notifications/initialized"}):
            process.stdin.write(json.dumps(message).encode() + b"\n")
            process.stdin.flush()
        assert json.loads(process.stdout.readline())["id"] == 0
        process.stdin.write(json.dumps(_bash_call(1, SLOW_WRITE)).encode() + b"\n")
        process.stdin.flush()
        deadline = time.monotonic() + 20
        while not (workspace / "began.txt").exists() and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        process.stdin.close()  # the client is gone
        assert process.wait(timeout=20) == 0
    time.sleep(max(0.0, started + PAST_THE_END - time.monotonic()))
    assert not (workspace / "slept.txt").exists()
    [record] = list(iter_records(storage, "s"))
    assert (record["tool"], record["result"]["status"]) == ("Bash", "error")
    assert record["result"]["errorMessage"] == STOPPED


# -- benign: what cancellation must not touch ---------------------------------------------------


async def test_a_fast_call_is_unaffected_even_by_a_late_cancel(
    ws_gate: StubGate, workspace: Path
) -> None:
    endpoints: list[HttpEndpoint] = []
    async with (
        _ws_proxy(ws_gate, workspace) as proxy,
        serving_http(proxy, endpoints.append),
        http_client(endpoints[0], read_timeout_seconds=30) as session,
    ):
        result = await session.call_tool("Bash", {"command": "echo hi > fast.txt; echo ok"})
        # a cancel for a request that already completed is ignored
        late = types.CancelledNotification(
            params=types.CancelledNotificationParams(request_id=1, reason="too late")
        )
        await session.send_notification(late)
        again = await session.call_tool("Read", {"file_path": "fast.txt"})
    assert not result.is_error and text_of(result) == "ok\n"
    assert "hi" in text_of(again)
    assert (workspace / "fast.txt").read_text() == "hi\n"
    assert [(r["tool"], r["status"]) for r in ws_gate.records()] == [
        ("Bash", "success"),
        ("Read", "success"),
    ]


async def test_a_background_server_started_by_a_finished_command_does_not_change_its_record(
    ws_gate: StubGate, workspace: Path
) -> None:
    # Background processes never outlive a call (they end with its group): a quick command
    # that backgrounds one is recorded as the success it was.
    async with _ws_proxy(ws_gate, workspace) as proxy, memory_client(proxy) as session:
        result = await session.call_tool("Bash", {"command": "(sleep 30) & echo started"})
    assert not result.is_error and text_of(result) == "started\n"
    assert ws_gate.records()[0]["status"] == "success"


# -- relayed upstream calls ---------------------------------------------------------------------


@pytest.mark.slow
async def test_a_cancelled_upstream_call_is_cancelled_upstream_and_recorded(
    gate: StubGate, tmp_path: Path
) -> None:
    target = tmp_path / "written.txt"
    started = time.monotonic()
    proxy = RecordingProxy(gate, [test_upstream()], report=lambda _: None)
    async with proxy, memory_client(proxy) as session:
        with anyio.move_on_after(0.5):
            await session.call_tool("write_later", {"path": str(target), "seconds": 2})
        [record] = await _records(gate)
        with anyio.fail_after(10):  # the upstream hears the cancellation
            while not Path(f"{target}.cancelled").exists():
                await anyio.sleep(0.02)
        assert text_of(await session.call_tool("echo", {"text": "after"})) == "after"
    await _sleep_until(started + 2.5)
    assert not target.exists()
    assert (record["tool"], record["status"]) == ("mcp__test__write_later", "error")
    assert record["error_message"] == (
        "cancelled before completion; notifications/cancelled sent to 'test'"
    )


# -- local tools that cannot be stopped ---------------------------------------------------------

SCHEMA = {"type": "object", "properties": {}}


async def test_a_cancelled_local_tool_that_cannot_stop_is_recorded_when_it_returns(
    gate: StubGate,
) -> None:
    release = threading.Event()
    entered = threading.Event()

    def stubborn(arguments: dict[str, Any]) -> str:
        entered.set()
        release.wait(10)
        return "finished anyway"

    tool = LocalTool("Stubborn", "Cannot be stopped.", SCHEMA, stubborn)
    async with RecordingProxy(gate, [], local_tools=[tool]) as proxy, memory_client(proxy) as s:
        async with anyio.create_task_group() as group:
            group.start_soon(s.call_tool, "Stubborn", {})
            await anyio.to_thread.run_sync(entered.wait, 10)
            group.cancel_scope.cancel()
        assert gate.records() == []  # the handler still runs: not recorded yet
        release.set()
        [record] = await _records(gate)
    assert record["status"] == "error"
    assert record["error_message"] == "cancelled; the tool ran to its end: finished anyway"


async def test_a_cancelled_local_tool_still_running_after_the_wait_says_so(
    gate: StubGate, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(local_tools_module, "STOP_WAIT_S", 0.2)
    release = threading.Event()

    def hung(arguments: dict[str, Any]) -> str:
        release.wait(10)
        return "too late"

    tool = LocalTool("Hung", "Never returns in time.", SCHEMA, hung)
    try:
        async with (
            RecordingProxy(gate, [], local_tools=[tool]) as proxy,
            memory_client(proxy) as session,
        ):
            with anyio.move_on_after(0.2):
                await session.call_tool("Hung", {})
            [record] = await _records(gate)
    finally:
        release.set()
    assert record["error_message"] == (
        "cancelled before completion; the tool had not returned 0.2s later "
        "(what it does after that is not in this record)"
    )


def _stop(result: types.CallToolResult | None, **fields: Any) -> Any:
    from pytest_harness_audit.doors.proxy.local_tools import CallStopped

    return CallStopped(Exception("cancelled"), result, **fields)


def _text_result(text: str, *, is_error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=is_error)


@pytest.mark.parametrize(
    ("stop", "detail"),
    [
        (_stop(_text_result("Bash: stopped, group ended", is_error=True), stopped=True),
         "Bash: stopped, group ended"),
        # the command finished just before the stop reached it: it ran to its end
        (_stop(_text_result("done"), stopped=True), "the tool ran to its end: done"),
        (_stop(_text_result("wrote a.txt")), "the tool ran to its end: wrote a.txt"),
        (_stop(None, error=ValueError("bad")), "the tool raised ValueError: bad"),
        (_stop(None, still_running=5.0),
         "the tool had not returned 5s later (what it does after that is not in this record)"),
    ],
)  # fmt: skip
def test_how_a_stopped_call_is_described(stop: Any, detail: str) -> None:
    from pytest_harness_audit.doors.proxy.calls import stop_detail

    assert stop_detail(stop) == detail
