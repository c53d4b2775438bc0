"""Streamable-HTTP upstreams that go away and come back.

The SDK's HTTP client transport lets a failed POST (connection refused, connection lost)
escape as an exception in its task group, which ends the whole connection with a generic
error. ``ReachabilityTransport`` sits under the SDK's HTTP client and turns such a failure into
the JSON-RPC error of that one request (code ``UPSTREAM_UNREACHABLE``, message naming the URL
and the cause), so the call fails clearly and the connection — and the proxy — stay up.

An upstream server that restarts does not know the old MCP session any more; ``Reconnector``
lets a caller ask the task that owns the upstream's transport for a fresh connection (a new
MCP handshake) and wait for the outcome.
"""

from __future__ import annotations

import json
import os

import anyio
import httpx2
import mcp_types as types
from mcp.shared.exceptions import MCPError

#: JSON-RPC error code of a request the upstream could not be reached for (implementation range).
UPSTREAM_UNREACHABLE = -32001


class ReachabilityTransport(httpx2.AsyncBaseTransport):
    """An HTTP transport that answers a failed POST with a JSON-RPC error naming the cause."""

    def __init__(self, url: str) -> None:
        self._url = url
        self._inner = httpx2.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        """Send ``request``; a POST that cannot be delivered gets a 503 JSON-RPC error."""
        try:
            return await self._inner.handle_async_request(request)
        except httpx2.TransportError as exc:
            # GET (the notification stream) and DELETE have the SDK's own retry and cleanup.
            if request.method != "POST":
                raise
            if isinstance(exc, httpx2.ConnectError | httpx2.ConnectTimeout):
                message = f"unreachable at {self._url}: {describe_network_error(exc)}"
            else:
                message = f"connection to {self._url} failed: {describe_network_error(exc)}"
            error = {"code": UPSTREAM_UNREACHABLE, "message": message}
            body = json.dumps({"jsonrpc": "2.0", "id": None, "error": error}).encode()
            return httpx2.Response(
                503, headers={"content-type": "application/json"}, content=body, request=request
            )

    async def aclose(self) -> None:
        """Close the pooled connections."""
        await self._inner.aclose()


def describe_network_error(exc: BaseException) -> str:
    """The root cause in a few words: ``connection refused``, ``read timeout``…"""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        errno = getattr(current, "errno", None)
        if isinstance(current, OSError) and isinstance(errno, int):
            return os.strerror(errno).lower()
        current = current.__cause__ or current.__context__
    if isinstance(exc, httpx2.TimeoutException):
        return "timed out"
    return str(exc) or type(exc).__name__


_FORGOTTEN_SESSION = frozenset({"Session terminated", "Session not found"})


def needs_new_session(exc: MCPError) -> bool:
    """True when the upstream's MCP session cannot serve any more requests."""
    if exc.code == UPSTREAM_UNREACHABLE:
        return True
    # HTTP 404 once a session id exists: the server forgot the session. The SDK's client says
    # "Session terminated", or passes on the server's own JSON-RPC error ("Session not found"
    # from an SDK server that restarted).
    return exc.code == types.INVALID_REQUEST and exc.error.message in _FORGOTTEN_SESSION


class _Round:
    def __init__(self) -> None:
        self.finished = anyio.Event()
        self.error: str | None = None


class Reconnector:
    """Hand-off between callers that need a fresh connection and the task that owns it."""

    def __init__(self) -> None:
        self.wanted = anyio.Event()
        self._round = _Round()

    async def request(self) -> str | None:
        """Ask for a new connection and wait: None once connected, else why it failed."""
        current = self._round
        self.wanted.set()
        await current.finished.wait()
        return current.error

    def finish(self, error: str | None) -> None:
        """Report the outcome of the attempt to every waiting caller; start a new round."""
        current, self._round = self._round, _Round()
        self.wanted = anyio.Event()
        current.error = error
        current.finished.set()


async def first_of(*events: anyio.Event) -> None:
    """Return as soon as one of ``events`` is set."""
    async with anyio.create_task_group() as group:

        async def wait(event: anyio.Event) -> None:
            await event.wait()
            group.cancel_scope.cancel()

        for event in events:
            group.start_soon(wait, event)
