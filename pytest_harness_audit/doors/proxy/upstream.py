"""Connections to the upstream MCP servers (stdio subprocesses or streamable-HTTP URLs).

Each upstream gets an official ``ClientSession`` over the SDK's own transport. The read side of
the transport is watched so that an upstream which dies is noticed at once — in flight or idle —
and reported with a single stderr line; every later call to it fails fast instead of hanging.
An HTTP upstream that cannot be reached fails each call with the URL and the cause, and is
connected afresh (a new MCP handshake) on the next call, so it serves again once it is back.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from types import TracebackType
from typing import IO, Any, Protocol, TextIO, cast

import anyio
import httpx2
import mcp_types as types
from mcp.client.session import ClientRequestContext, ClientSession, IncomingMessage
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.dispatcher import ProgressFnT
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage

from pytest_harness_audit._version import __version__
from pytest_harness_audit.doors.proxy.client_requests import (
    CallOrigin,
    InFlightCalls,
    UpstreamAnswer,
    UpstreamRequest,
)
from pytest_harness_audit.doors.proxy.config import HttpUpstream, StdioUpstream, UpstreamSpec
from pytest_harness_audit.doors.proxy.errors import UpstreamStartError
from pytest_harness_audit.doors.proxy.reachability import (
    UPSTREAM_UNREACHABLE,
    ReachabilityTransport,
    Reconnector,
    needs_new_session,
)
from pytest_harness_audit.doors.proxy.upstream_stderr import LineScreen, StderrRelay

NotificationSink = Callable[["Upstream", types.ServerNotification], Awaitable[None]]
#: Answers a request the upstream sends to the client (sampling, elicitation, roots).
ClientRequestSink = Callable[["Upstream", UpstreamRequest], Awaitable[UpstreamAnswer]]
ReportLine = Callable[[str], None]


class UpstreamTape(Protocol):
    """Sees each listing and call of an upstream (a cassette being recorded)."""

    def listed(self, upstream: Upstream, tools: list[types.Tool]) -> None:
        """``upstream`` listed ``tools``."""

    def called(
        self,
        upstream: Upstream,
        name: str,
        arguments: dict[str, Any],
        answer: types.CallToolResult | MCPError,
    ) -> None:
        """``upstream`` answered the call of ``name`` with ``answer``."""

    def asked(self, upstream: Upstream, request: UpstreamRequest, answer: UpstreamAnswer) -> None:
        """``upstream`` sent ``request`` to the client during a call; ``answer`` went back."""


DEFAULT_CONNECT_TIMEOUT = 30.0
# Errors of the connection rather than answers of the server: not recorded in a cassette.
_TRANSPORT_CODES = frozenset({types.CONNECTION_CLOSED, UPSTREAM_UNREACHABLE})
# A listing that never stops paginating must not hang the proxy.
_MAX_PAGES = 100


class UpstreamGone(Exception):
    """The upstream's connection is closed (its process exited or its stream ended)."""


class Upstream:
    """One connected upstream MCP server, after the MCP handshake."""

    def __init__(self, spec: UpstreamSpec, session: ClientSession) -> None:
        self.spec = spec
        self.session = session
        self.gone = anyio.Event()
        self.in_flight = InFlightCalls()
        #: Set for upstreams that can be connected afresh (HTTP); None for processes.
        self.reconnector: Reconnector | None = (
            Reconnector() if isinstance(spec, HttpUpstream) else None
        )
        self._stale = False
        #: Set while a cassette records this upstream's exchanges.
        self.tape: UpstreamTape | None = None

    def attach(self, session: ClientSession) -> None:
        """Use ``session``, a fresh connection to the same server, from now on."""
        self.session = session
        self.gone = anyio.Event()
        self._stale = False

    async def current_session(self) -> ClientSession:
        """The session to send on, reconnecting first when the last one failed.

        Raises ``UpstreamGone`` when the upstream is down (and, for HTTP, still unreachable).
        """
        if self.reconnector is not None and (self._stale or self.gone.is_set()):
            error = await self.reconnector.request()
            if error is not None:
                raise UpstreamGone(error)
        self.ensure_alive()
        return self.session

    def _note_failure(self, session: ClientSession, exc: MCPError) -> bool:
        """Mark the session stale if ``exc`` says it is unusable; True when it was."""
        if self.reconnector is None or not needs_new_session(exc):
            return False
        if session is self.session:
            self._stale = True
        return True

    @property
    def name(self) -> str:
        """The server name (config key, or derived from the command)."""
        return self.spec.name

    @property
    def alive(self) -> bool:
        """False once the upstream's connection has closed."""
        return not self.gone.is_set()

    @property
    def capabilities(self) -> types.ServerCapabilities:
        """What the upstream announced in its handshake."""
        return self.session.server_capabilities or types.ServerCapabilities()

    @property
    def instructions(self) -> str | None:
        """The upstream's instructions for the model, if any."""
        return self.session.instructions

    def ensure_alive(self) -> None:
        """Raise ``UpstreamGone`` if the upstream is no longer reachable."""
        if self.gone.is_set():
            raise UpstreamGone(f"upstream {self.name!r} is not running")

    async def list_tools(self) -> list[types.Tool]:
        """All tools of the upstream (every page)."""
        tools: list[types.Tool] = []
        cursor: str | None = None
        session = await self.current_session()
        for _ in range(_MAX_PAGES):
            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            try:
                page = await session.list_tools(params=params)
            except MCPError as exc:
                self._note_failure(session, exc)
                raise
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        if self.tape is not None:
            self.tape.listed(self, tools)
        return tools

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any],
        *,
        progress: ProgressFnT | None = None,
        meta: types.RequestParamsMeta | None = None,
        origin: CallOrigin | None = None,
    ) -> types.CallToolResult:
        """Forward one ``tools/call`` and return the upstream's result unchanged.

        Sent as a plain request rather than through ``ClientSession.call_tool``: that helper
        re-validates structured output against the tool's schema (listing tools first when it
        has not seen the tool), which is the end client's job, not the relay's. Requests the
        upstream sends meanwhile (sampling, elicitation, roots) go to ``origin``'s client.
        """
        request = types.CallToolRequest(
            params=types.CallToolRequestParams(name=name, arguments=arguments, _meta=meta)
        )
        for attempt in range(2):
            session = await self.current_session()
            try:
                with self.in_flight.track(origin):
                    result = await session.send_request(
                        request, types.CallToolResult, progress_callback=progress
                    )
                if self.tape is not None:
                    self.tape.called(self, name, arguments, result)
                return result
            except MCPError as exc:
                unusable = self._note_failure(session, exc)
                # A forgotten session refused the call before running it: safe to send again.
                if not unusable or exc.code == UPSTREAM_UNREACHABLE or attempt:
                    if self.tape is not None and exc.code not in _TRANSPORT_CODES:
                        self.tape.called(self, name, arguments, exc)
                    raise
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises


class _WatchedReadStream:
    """Delegate to a transport read stream and call ``on_end`` once when it ends."""

    def __init__(self, inner: Any, on_end: Callable[[], None]) -> None:
        self._inner = inner
        self._on_end = on_end

    async def receive(self) -> SessionMessage | Exception:
        try:
            item: SessionMessage | Exception = await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._on_end()
            raise
        return item

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> _WatchedReadStream:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> _WatchedReadStream:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        await self.aclose()
        return None


class _Lifecycle:
    """Tracks whether the proxy is closing, so a normal shutdown is not reported as a crash."""

    def __init__(self, report: ReportLine) -> None:
        self.ready = False
        self.closing = False
        self.report = report


@asynccontextmanager
async def open_upstream(
    spec: UpstreamSpec,
    *,
    on_notification: NotificationSink,
    report: ReportLine,
    stderr: TextIO | None = None,
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
    on_client_request: ClientRequestSink | None = None,
    reuse: Upstream | None = None,
    screen_stderr: LineScreen | None = None,
) -> AsyncIterator[Upstream]:
    """Start or reach ``spec``, run the MCP handshake, and yield the connected upstream.

    With ``on_client_request`` the proxy announces sampling, elicitation and roots to the
    upstream and hands it each such request; without, the upstream is told none is supported.

    With ``reuse`` the new connection is attached to that (same-named) upstream once the
    handshake succeeds, so everything holding it sends on the new session.

    With ``screen_stderr`` a process's stderr is relayed line by line through it to
    ``stderr`` (:mod:`.upstream_stderr`); without, the process inherits ``stderr``.

    Raises ``UpstreamStartError`` (one line naming the server) when the process cannot start,
    exits, or does not answer ``initialize`` within ``connect_timeout`` seconds.
    """
    lifecycle = _Lifecycle(report)
    holder: list[Upstream] = []

    def on_end() -> None:
        # Before the handshake completes a failure is the start error; a reused upstream keeps
        # its state until the new session is attached.
        if holder and lifecycle.ready and not holder[0].gone.is_set():
            holder[0].gone.set()
            if lifecycle.ready and not lifecycle.closing:
                report(
                    f"harness-audit proxy: upstream {spec.name!r} stopped (connection closed); "
                    "calls to its tools now return errors"
                )

    async def message_handler(message: IncomingMessage) -> None:
        if holder and isinstance(message, types.ServerNotification):
            await on_notification(holder[0], message)

    failure: UpstreamStartError | None = None
    async with AsyncExitStack() as stack:
        try:
            read_stream, write_stream = await _enter_transport(stack, spec, stderr, screen_stderr)
            session = ClientSession(
                cast(Any, _WatchedReadStream(read_stream, on_end)),
                write_stream,
                message_handler=message_handler,
                client_info=types.Implementation(name="harness-audit-proxy", version=__version__),
                **_client_request_callbacks(holder, on_client_request),
            )
            await stack.enter_async_context(session)
            holder.append(reuse if reuse is not None else Upstream(spec, session))
            with anyio.fail_after(connect_timeout):
                await session.initialize()
            if reuse is not None:
                reuse.attach(session)
            lifecycle.ready = True
        except TimeoutError:
            reason = f"did not answer 'initialize' within {connect_timeout:g}s"
            failure = UpstreamStartError(f"upstream {spec.name!r} {reason}", reason)
        except Exception as exc:
            reason = describe_error(exc)
            failure = UpstreamStartError(
                f"upstream {spec.name!r} could not be started: {reason}", reason
            )
        if failure is None:
            try:
                yield holder[0]
            finally:
                lifecycle.closing = True
        else:
            lifecycle.closing = True
    # Raised outside the transports' task groups so the caller sees this error, not a group.
    if failure is not None:
        raise failure


def _client_request_callbacks(
    holder: list[Upstream], sink: ClientRequestSink | None
) -> dict[str, Any]:
    """``ClientSession`` callbacks handing the upstream's requests to ``sink``.

    Passing a callback is what makes the SDK announce the capability, so none is passed
    without a sink.
    """
    if sink is None:
        return {}

    async def ask(request: UpstreamRequest) -> UpstreamAnswer:
        if not holder:  # a request during the handshake: no call can be behind it
            return types.ErrorData(code=types.INVALID_REQUEST, message="no call in progress")
        answer = await sink(holder[0], request)
        if holder[0].tape is not None:
            holder[0].tape.asked(holder[0], request, answer)
        return answer

    async def sampling(
        context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> Any:
        return await ask(types.CreateMessageRequest(params=params))

    async def elicitation(context: ClientRequestContext, params: types.ElicitRequestParams) -> Any:
        return await ask(types.ElicitRequest(params=params))

    async def list_roots(context: ClientRequestContext) -> Any:
        return await ask(types.ListRootsRequest())

    return {
        "sampling_callback": sampling,
        "elicitation_callback": elicitation,
        "list_roots_callback": list_roots,
    }


async def _enter_transport(
    stack: AsyncExitStack,
    spec: UpstreamSpec,
    stderr: TextIO | None,
    screen: LineScreen | None = None,
) -> tuple[Any, Any]:
    if isinstance(spec, StdioUpstream):
        parameters = StdioServerParameters(
            command=spec.command,
            args=list(spec.args),
            env={**os.environ, **spec.env},
            cwd=spec.cwd,
        )
        if screen is None:
            errlog = _usable_stderr(stderr, stack)
            streams = await stack.enter_async_context(stdio_client(parameters, errlog=errlog))
            return streams[0], streams[1]
        relay = StderrRelay(spec.name, sys.stderr if stderr is None else stderr, screen)
        child_end = await relay.open(stack)
        try:
            streams = await stack.enter_async_context(
                stdio_client(parameters, errlog=cast(TextIO, child_end))
            )
        finally:
            child_end.close()  # the child has its own: the relay reads until the child's closes
        return streams[0], streams[1]
    assert isinstance(spec, HttpUpstream)
    client = httpx2.AsyncClient(
        headers=dict(spec.headers),
        timeout=httpx2.Timeout(30.0, read=300.0),
        transport=ReachabilityTransport(spec.url),
    )
    await stack.enter_async_context(client)
    streams = await stack.enter_async_context(streamable_http_client(spec.url, http_client=client))
    return streams[0], streams[1]


def _usable_stderr(stderr: TextIO | None, stack: AsyncExitStack) -> TextIO:
    """A stderr the child can inherit: it needs a real file descriptor."""
    candidate = stderr if stderr is not None else sys.stderr
    try:
        candidate.fileno()
    except (AttributeError, OSError, ValueError):
        devnull: IO[str] = open(os.devnull, "w")  # noqa: SIM115 - closed by the exit stack
        stack.callback(devnull.close)
        return cast(TextIO, devnull)
    return candidate


def describe_error(exc: BaseException) -> str:
    """One line for an exception, looking inside exception groups for the real cause."""
    inner = getattr(exc, "exceptions", None)
    if inner:
        return describe_error(inner[0])
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {exc.filename or exc}"
    text = str(exc).strip().splitlines()
    detail = text[0] if text else ""
    if isinstance(exc, MCPError) and detail == "Connection closed":
        return "it exited before completing the MCP handshake"
    if isinstance(exc, MCPError) and exc.code == UPSTREAM_UNREACHABLE:
        return exc.error.message
    return f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__
