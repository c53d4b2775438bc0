"""Half-open connections cannot wedge the HTTP proxy: a header deadline, a cap on connections
without the token (oldest dropped first), and SIGTERM honoured while they are held."""

from __future__ import annotations

import os
import resource
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import anyio.abc
import pytest
from proxy_support import http_client, text_of
from stub_gate import StubGate

from pytest_harness_audit.doors.proxy import (
    HttpEndpoint,
    LocalTool,
    RecordingProxy,
    parse_ready_line,
)
from pytest_harness_audit.doors.proxy.connections import UnprovenConnections

pytestmark = pytest.mark.anyio

ECHO = LocalTool(
    name="echo",
    description="Return the text unchanged.",
    input_schema={"type": "object", "properties": {"text": {"type": "string"}}},
    handler=lambda arguments: arguments["text"],
)


@asynccontextmanager
async def serving(storage: Path, **limits: float) -> AsyncIterator[HttpEndpoint]:
    found: list[HttpEndpoint] = []
    ready = anyio.Event()
    stop = anyio.Event()

    def announce(endpoint: HttpEndpoint) -> None:
        found.append(endpoint)
        ready.set()

    async with (
        RecordingProxy(StubGate(storage), local_tools=[ECHO], report=lambda line: None) as proxy,
        anyio.create_task_group() as group,
    ):
        group.start_soon(lambda: proxy.serve_http(on_ready=announce, stop=stop, **limits))
        await ready.wait()
        yield found[0]
        stop.set()


def _port(endpoint: HttpEndpoint) -> int:
    return int(endpoint.url.rsplit(":", 1)[1].split("/")[0])


async def _closed_by_server(stream: anyio.abc.SocketStream, within: float) -> bool:
    with anyio.move_on_after(within):
        try:
            await stream.receive()
        except (anyio.EndOfStream, anyio.BrokenResourceError, OSError):
            return True
        return False  # the server answered something: it did not just drop it
    return False


async def test_idle_sockets_beyond_the_cap_are_dropped_and_a_real_client_is_served(
    tmp_path: Path,
) -> None:
    async with serving(tmp_path, max_unproven=16, header_timeout=120) as endpoint:
        idle = [await anyio.connect_tcp("127.0.0.1", _port(endpoint)) for _ in range(200)]
        try:
            with anyio.fail_after(60):
                async with http_client(endpoint) as session:
                    echoed = await session.call_tool("echo", {"text": "still here"})
                assert text_of(echoed) == "still here"
            closed = 0
            for stream in idle[:150]:  # the oldest: dropped to make room
                closed += await _closed_by_server(stream, within=5)
            assert closed == 150
        finally:
            for stream in idle:
                await stream.aclose()


async def test_an_authenticated_session_is_not_dropped_for_room(tmp_path: Path) -> None:
    async with serving(tmp_path, max_unproven=4, header_timeout=120) as endpoint:
        with anyio.fail_after(60):
            async with http_client(endpoint) as session:
                assert text_of(await session.call_tool("echo", {"text": "a"})) == "a"
                idle = [await anyio.connect_tcp("127.0.0.1", _port(endpoint)) for _ in range(50)]
                assert text_of(await session.call_tool("echo", {"text": "b"})) == "b"
                for stream in idle:
                    await stream.aclose()


async def test_a_connection_trickling_its_headers_is_closed_at_the_deadline(
    tmp_path: Path,
) -> None:
    async with serving(tmp_path, header_timeout=0.5) as endpoint:
        stream = await anyio.connect_tcp("127.0.0.1", _port(endpoint))
        await stream.send(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and never the rest
        assert await _closed_by_server(stream, within=30)
        await stream.aclose()
        # a connection that sends its request at once is answered (401: no token)
        stream = await anyio.connect_tcp("127.0.0.1", _port(endpoint))
        await stream.send(b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        with anyio.fail_after(30):
            assert (await stream.receive()).startswith(b"HTTP/1.1 401")
        await stream.aclose()


def test_unproven_registry_closes_the_oldest_first() -> None:
    class Transport:
        def __init__(self) -> None:
            self.aborted = False

        def abort(self) -> None:
            self.aborted = True

    registry = UnprovenConnections(2)
    first, second, third = Transport(), Transport(), Transport()
    registry.admit(1, first)  # type: ignore[arg-type]
    registry.admit(2, second)  # type: ignore[arg-type]
    registry.settle(2)  # proved the token
    registry.admit(3, third)  # type: ignore[arg-type]
    assert (first.aborted, second.aborted, third.aborted, len(registry)) == (False, False, False, 2)
    registry.admit(4, Transport())  # type: ignore[arg-type]
    assert first.aborted and not third.aborted and registry.evicted == 1
    with pytest.raises(ValueError, match="at least 1"):
        UnprovenConnections(0)


def _limit_fds() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and fd limits")
@pytest.mark.slow
async def test_a_flood_under_a_small_fd_limit_neither_wedges_it_nor_blocks_sigterm(
    tmp_path: Path,
) -> None:
    argv = [sys.executable, "-m", "pytest_harness_audit", "--storage", str(tmp_path / "store")]
    argv += ["proxy", "--workspace", str(tmp_path), "--http", "127.0.0.1:0"]
    process = subprocess.Popen(
        argv, stderr=subprocess.PIPE, text=True, preexec_fn=_limit_fds, env=dict(os.environ)
    )
    flood: list[socket.socket] = []
    try:
        assert process.stderr is not None
        endpoint = None
        while endpoint is None:
            line = await anyio.to_thread.run_sync(process.stderr.readline)
            assert line, "the proxy exited before serving"
            endpoint = parse_ready_line(line)
        for _ in range(300):  # more half-open connections than the proxy has descriptors
            sock = socket.socket()
            sock.settimeout(5)
            try:
                sock.connect(("127.0.0.1", _port(endpoint)))
            except OSError:
                sock.close()
                continue
            flood.append(sock)
        with anyio.fail_after(60):
            async with http_client(endpoint) as session:
                listed = [tool.name for tool in (await session.list_tools()).tools]
        assert "Read" in listed
        process.send_signal(signal.SIGTERM)
        code = await anyio.to_thread.run_sync(lambda: process.wait(timeout=30))
        assert code is not None
    finally:
        for sock in flood:
            sock.close()
        if process.poll() is None:
            process.kill()
            process.wait()


async def test_a_body_over_the_limit_is_refused_and_a_normal_call_still_works(
    tmp_path: Path,
) -> None:
    from pytest_harness_audit.doors.proxy.http import MAX_REQUEST_BODY

    async with serving(tmp_path) as endpoint:
        stream = await anyio.connect_tcp("127.0.0.1", _port(endpoint))
        head = (
            f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {endpoint.token}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {MAX_REQUEST_BODY + 1}\r\n\r\n"
        )
        await stream.send(head.encode())
        with anyio.fail_after(30):
            assert (await stream.receive()).startswith(b"HTTP/1.1 413")
        await stream.aclose()
        with anyio.fail_after(60):
            async with http_client(endpoint) as session:
                assert text_of(await session.call_tool("echo", {"text": "ok"})) == "ok"
