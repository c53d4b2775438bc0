"""Serve the proxy over streamable HTTP on loopback, guarded by a random bearer token.

Every HTTP request must carry ``Authorization: Bearer <token>``; anything else gets ``401``
before it reaches the MCP layer. The listening socket is bound before the server starts, so
port 0 (any free port) works and the announced URL is exact. Connections that have not shown
the token are bounded in time and number (see ``connections``), so half-open sockets cannot
wedge the proxy.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import re
import secrets
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio
import uvicorn
from mcp.server.lowlevel.server import Server
from starlette.types import ASGIApp, Receive, Scope, Send

from pytest_harness_audit.doors.proxy.connections import (
    DEFAULT_HEADER_TIMEOUT,
    DEFAULT_MAX_UNPROVEN,
    guarded_protocol,
)
from pytest_harness_audit.doors.proxy.envelope import EnvelopeCheck, Unservable
from pytest_harness_audit.doors.proxy.errors import ProxyError

MCP_PATH = "/mcp"
_READY_LINE = re.compile(r"serving (?P<url>http://\S+) token=(?P<token>\S+)")
_GRACEFUL_SHUTDOWN_SECONDS = 2
#: The largest HTTP request body the proxy reads (bytes).
MAX_REQUEST_BODY = 8 * 1024 * 1024


@dataclass(frozen=True)
class HttpEndpoint:
    """Where a running HTTP proxy listens and the token its clients must send."""

    url: str
    token: str

    @property
    def headers(self) -> dict[str, str]:
        """The HTTP headers a client sends to be let in."""
        return {"Authorization": f"Bearer {self.token}"}

    def ready_line(self) -> str:
        """The single stderr line announcing the endpoint (parse it with ``parse_ready_line``)."""
        return f"harness-audit proxy: serving {self.url} token={self.token}"


def parse_ready_line(line: str) -> HttpEndpoint | None:
    """Read an ``HttpEndpoint`` back from the announcement line, or None if it is not one."""
    match = _READY_LINE.search(line)
    if match is None:
        return None
    return HttpEndpoint(url=match["url"], token=match["token"])


def new_token() -> str:
    """A fresh random bearer token."""
    return secrets.token_urlsafe(32)


class BearerTokenGuard:
    """ASGI middleware: refuse (401) any HTTP request without the exact bearer token.

    Once ``closing`` is set, every request gets 503: the MCP sessions are being shut down. A
    request body over ``max_body`` bytes is refused (413) or, when chunked, cut off.
    """

    def __init__(self, app: ASGIApp, token: str, max_body: int = MAX_REQUEST_BODY) -> None:
        self._app = app
        self._expected = f"Bearer {token}".encode()
        self.closing = False
        #: The largest request body accepted (a larger declared length gets 413).
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass authorised requests (and lifespan events) through; answer 401 otherwise."""
        if scope["type"] in ("http", "websocket"):
            supplied = b""
            for key, value in scope.get("headers", []):
                if key == b"authorization":
                    supplied = value
                    break
            if not hmac.compare_digest(supplied, self._expected):
                await _refuse(send, 401, "unauthorized", "missing or wrong bearer token")
                return
            if self.closing:
                await _refuse(send, 503, "unavailable", "the proxy is shutting down")
                return
            if scope["type"] == "http":
                declared = _content_length(scope)
                if declared is not None and declared > self.max_body:
                    await _refuse(
                        send, 413, "too_large", f"request body over {self.max_body} bytes"
                    )
                    return
                receive = _bounded(receive, self.max_body)
        await self._app(scope, receive, send)


def _content_length(scope: Scope) -> int | None:
    for key, value in scope.get("headers", []):
        if key == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


def _bounded(receive: Receive, limit: int) -> Receive:
    """``receive`` that ends the request (a disconnect) once the body passes ``limit`` bytes:
    a chunked body carries no length to refuse up front."""
    seen = 0

    async def bounded() -> Any:
        nonlocal seen
        message = await receive()
        if message["type"] == "http.request":
            seen += len(message.get("body", b""))
            if seen > limit:
                return {"type": "http.disconnect"}
        return message

    return bounded


async def _refuse(send: Send, status: int, error: str, description: str) -> None:
    body = json.dumps({"error": error, "error_description": description}).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
    ]
    if status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="harness-audit-proxy"'))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class _EmbeddedUvicorn(uvicorn.Server):
    """Uvicorn without its signal handling: the proxy owns shutdown (and its upstreams)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Any:
        """Do not install signal handlers."""
        yield


async def serve_http(
    server: Server[Any],
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    token: str | None = None,
    on_ready: Callable[[HttpEndpoint], None] | None = None,
    stop: anyio.Event | None = None,
    header_timeout: float = DEFAULT_HEADER_TIMEOUT,
    max_unproven: int = DEFAULT_MAX_UNPROVEN,
    unservable: Unservable | None = None,
) -> None:
    """Serve ``server`` over streamable HTTP until ``stop`` is set or the caller is cancelled.

    A new connection has ``header_timeout`` seconds to send its first request's headers; at
    most ``max_unproven`` connections without the token are held (the oldest goes first).
    ``unservable`` answers (and records) a call the transport's parser would refuse.
    """
    token = token or new_token()
    protocol, _unproven = guarded_protocol(
        token, header_timeout=header_timeout, max_unproven=max_unproven
    )
    app = EnvelopeCheck(server.streamable_http_app(host=host), unservable)
    guard = BearerTokenGuard(app, token)
    sessions = server.session_manager
    sock = _listen(host, port)
    bound_port = sock.getsockname()[1]
    url_host = f"[{host}]" if sock.family == socket.AF_INET6 else host
    endpoint = HttpEndpoint(url=f"http://{url_host}:{bound_port}{MCP_PATH}", token=token)
    # The session manager runs here rather than in the app's lifespan so that, on shutdown, the
    # MCP sessions (and their open SSE streams) end before the web server waits for connections.
    config = uvicorn.Config(
        guard,
        log_config=None,
        log_level="warning",
        access_log=False,
        lifespan="off",
        http=protocol,
        timeout_graceful_shutdown=_GRACEFUL_SHUTDOWN_SECONDS,
    )
    web = _EmbeddedUvicorn(config)
    finished = anyio.Event()
    quiet = _quiet_accept_errors()

    async def run_web() -> None:
        try:
            # Shielded: on cancellation the web server is asked to stop, then allowed to.
            with anyio.CancelScope(shield=True):
                await web.serve(sockets=[sock])
        finally:
            sock.close()
            finished.set()

    async with anyio.create_task_group() as group:
        try:
            async with sessions.run():
                group.start_soon(run_web)
                while not web.started and not finished.is_set():
                    await anyio.sleep(0.01)
                if web.started and on_ready is not None:
                    on_ready(endpoint)
                with anyio.CancelScope() as waiter:
                    group.start_soon(_cancel_when_finished, finished, waiter)
                    await (stop.wait() if stop is not None else anyio.sleep_forever())
                guard.closing = True
        finally:
            guard.closing = True
            web.should_exit = True
            quiet.close()


def _listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ProxyError(f"--http {host}:{port}: cannot listen: {exc.strerror or exc}") from None
    sock.listen(128)
    return sock


async def _cancel_when_finished(finished: anyio.Event, scope: anyio.CancelScope) -> None:
    await finished.wait()
    scope.cancel()


_ACCEPT_OUT_OF_RESOURCES = "socket.accept() out of system resource"


class _QuietAcceptErrors:
    """While serving: asyncio's "out of file descriptors" accept errors are not logged.

    asyncio already backs off (it retries accepting a second later); logging a traceback for
    each retry floods stderr, and a client that does not drain the proxy's stderr would then
    block the whole proxy on a full pipe. Other errors go to the previous handler.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._previous = loop.get_exception_handler()
        #: How many accept attempts ran out of descriptors.
        self.suppressed = 0
        loop.set_exception_handler(self._handle)

    def _handle(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if context.get("message") == _ACCEPT_OUT_OF_RESOURCES:
            self.suppressed += 1
            return
        if self._previous is not None:
            self._previous(loop, context)
        else:
            loop.default_exception_handler(context)

    def close(self) -> None:
        """Restore the loop's previous handler."""
        if self._loop.get_exception_handler() == self._handle:
            self._loop.set_exception_handler(self._previous)


def _quiet_accept_errors() -> _QuietAcceptErrors:
    return _QuietAcceptErrors(asyncio.get_running_loop())
