"""A stdio relay to a recording proxy a test serves over HTTP (``harness-audit relay URL``).

A harness's proxy runs in the test's own process (:class:`~pytest_harness_audit.session.
proxy_session.RecordingProxySession`), where every call is judged between the watches that
bracket it. An agent that speaks MCP only over stdio starts its server itself, as a child of
its own: were that child a proxy of its own, the auditor's own work in it (reading the
workspace's credential files to learn its secrets, writing the post store a send goes to)
would happen inside the agent's run and be taken for the agent's. The relay is that child
instead: it reads JSON-RPC lines on stdin and writes them to the proxy's streamable-HTTP
endpoint with the official client transport, and writes what comes back on stdout. It judges
nothing, reads no file, and holds no secret but the proxy's bearer token (from
``HARNESS_AUDIT_RELAY_TOKEN``, which the MCP config's ``env`` sets).

The wire is :mod:`.stdio`'s: a line that does not parse is answered there with a JSON-RPC error,
and a request whose id is still in flight is refused, exactly as the stdio proxy does. When the
proxy cannot be reached, each request is answered with an error saying so, never left hanging.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from contextlib import suppress
from typing import IO

import anyio
import httpx2
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import MCP_DEFAULT_TIMEOUT, create_mcp_http_client
from mcp.shared.message import SessionMessage

from pytest_harness_audit.doors.proxy.stdio import serve_stdio_with

#: The environment variable the relay reads the proxy's bearer token from.
TOKEN_VARIABLE = "HARNESS_AUDIT_RELAY_TOKEN"


def relay_command(url: str, python: str | None = None) -> list[str]:
    """The argv of a relay to the proxy at ``url`` (its token goes in :data:`TOKEN_VARIABLE`)."""
    return [python or sys.executable, "-m", "pytest_harness_audit", "relay", url]


async def relay_stdio(
    url: str,
    headers: Mapping[str, str],
    *,
    stdin: IO[bytes] | None = None,
    stdout: IO[bytes] | None = None,
) -> str | None:
    """Relay the wire (the process's stdio by default) to the proxy at ``url`` until stdin ends
    or the proxy ends the session. Returns ``None``, or why the proxy could not be reached (the
    requests then waiting were answered with an error saying so)."""
    failures: list[str] = []

    async def run(
        incoming: MemoryObjectReceiveStream[SessionMessage | Exception],
        outgoing: MemoryObjectSendStream[SessionMessage],
    ) -> None:
        pending: dict[types.RequestId, None] = {}
        try:
            await _relay(url, headers, incoming, outgoing, pending)
        except Exception as exc:  # the transport's failures come out of its task group
            failures.append(f"the recording proxy at {url} is unreachable: {_first_cause(exc)}")
            for request_id in list(pending):
                error = types.ErrorData(code=types.INTERNAL_ERROR, message=failures[0])
                refusal = types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error)
                with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                    await outgoing.send(SessionMessage(refusal))
        finally:
            await outgoing.aclose()

    await serve_stdio_with(run, stdin=stdin, stdout=stdout)
    return failures[0] if failures else None


async def _relay(
    url: str,
    headers: Mapping[str, str],
    incoming: MemoryObjectReceiveStream[SessionMessage | Exception],
    outgoing: MemoryObjectSendStream[SessionMessage],
    pending: dict[types.RequestId, None],
) -> None:
    """Pump messages both ways until one side is done; ``pending``: the requests unanswered."""
    # A tool call may run as long as the proxy lets it: no read timeout of the relay's own.
    timeout = httpx2.Timeout(MCP_DEFAULT_TIMEOUT, read=None)
    async with (
        create_mcp_http_client(headers=dict(headers), timeout=timeout) as client,
        streamable_http_client(url, http_client=client) as (from_proxy, to_proxy),
        anyio.create_task_group() as group,
    ):
        stdin_ended = anyio.Event()

        async def to_the_proxy() -> None:
            # ``to_proxy`` stays open to the end: closing it would drop the requests in flight
            async for message in incoming:
                if isinstance(message, Exception):
                    continue  # the wire answered it already
                if isinstance(message.message, types.JSONRPCRequest):
                    pending[message.message.id] = None
                await to_proxy.send(message)
            # stdin has ended: the answers still owed are written before the relay ends
            stdin_ended.set()
            if not pending:
                group.cancel_scope.cancel()

        async def to_the_agent() -> None:
            async for message in from_proxy:
                if isinstance(message, Exception):
                    print(f"harness-audit relay: {_first_cause(message)}", file=sys.stderr)
                    continue
                answer = message.message
                answered_id = (
                    answer.id
                    if isinstance(answer, types.JSONRPCResponse | types.JSONRPCError)
                    else None
                )
                if answered_id is not None:
                    pending.pop(answered_id, None)
                await outgoing.send(message)
                if stdin_ended.is_set() and not pending:
                    break
            group.cancel_scope.cancel()

        group.start_soon(to_the_proxy)
        group.start_soon(to_the_agent)


def _first_cause(exc: BaseException) -> str:
    """The first exception inside (possibly nested) exception groups, in one line."""
    while getattr(exc, "exceptions", None):
        exc = exc.exceptions[0]  # type: ignore[attr-defined]
    return " ".join(str(exc).split()) or type(exc).__name__


__all__ = ["TOKEN_VARIABLE", "relay_command", "relay_stdio"]
