"""``RecordingProxy``: upstreams + gate + MCP server, as one async context manager.

    async with RecordingProxy(gate, [upstream_from_argv(argv)]) as proxy:
        await proxy.serve_stdio()            # or: await proxy.serve_http(port=0, on_ready=...)

Entering connects every upstream (MCP handshake included) and builds the server; leaving stops
the upstreams — their processes with them — after the grace of a timed-out call, and then
compares the workspace once more (:mod:`.late_effects`).
"""

from __future__ import annotations

import contextlib
import functools
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, Any, TextIO

import anyio
from mcp.server.lowlevel.server import Server

from pytest_harness_audit.doors.proxy.calls import CallPipeline
from pytest_harness_audit.doors.proxy.client_requests import (
    ClientRequestRelay,
    UpstreamAnswer,
    UpstreamRequest,
)
from pytest_harness_audit.doors.proxy.config import UpstreamSpec, check_unique_names
from pytest_harness_audit.doors.proxy.errors import ProxyError
from pytest_harness_audit.doors.proxy.gate_protocol import GateLike
from pytest_harness_audit.doors.proxy.gated_reads import GatedReads
from pytest_harness_audit.doors.proxy.http import HttpEndpoint, serve_http
from pytest_harness_audit.doors.proxy.incoming import (
    notification_params,
    screened_instructions,
    withheld_if_secret,
)
from pytest_harness_audit.doors.proxy.late_effects import LateEffects, grace_after_timeout
from pytest_harness_audit.doors.proxy.local_tools import LocalTool
from pytest_harness_audit.doors.proxy.pin_guard import PinGuard
from pytest_harness_audit.doors.proxy.pins import ToolPins
from pytest_harness_audit.doors.proxy.pool import UpstreamPool
from pytest_harness_audit.doors.proxy.quiet_logs import install as quiet_upstream_logs
from pytest_harness_audit.doors.proxy.quiet_logs import redacting
from pytest_harness_audit.doors.proxy.routing import ToolCatalog
from pytest_harness_audit.doors.proxy.server import (
    ClientListeners,
    build_server,
    forward_upstream_notification,
    relayed,
)
from pytest_harness_audit.doors.proxy.stdio import serve_stdio
from pytest_harness_audit.doors.proxy.unservable import UnservableCalls
from pytest_harness_audit.doors.proxy.upstream import DEFAULT_CONNECT_TIMEOUT, ReportLine, Upstream
from pytest_harness_audit.doors.proxy.upstream_stderr import screened_line


def report_to_stderr(line: str) -> None:
    """Print one proxy status line on stderr."""
    print(line, file=sys.stderr, flush=True)


class RecordingProxy:
    """A governing, recording MCP proxy in front of zero or more upstream servers.

    Every ``tools/call``, ``resources/read`` and ``prompts/get`` is decided by ``gate`` before
    anything runs and recorded after it; the rest of the MCP traffic is relayed.
    ``local_tools`` are served in-process beside the upstreams' tools. ``call_timeout``
    (seconds) bounds each call; ``report`` receives the proxy's status lines (default:
    stderr). Upstream tools are pinned at their first listing
    (or against ``pins``); a later change is a ``tool_changed`` alert record. ``pin_path``: a
    pin file to write after the first listing when it does not exist yet.
    """

    def __init__(
        self,
        gate: GateLike[Any],
        upstreams: Sequence[UpstreamSpec] = (),
        *,
        local_tools: Sequence[LocalTool] = (),
        call_timeout: float | None = None,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        report: ReportLine = report_to_stderr,
        upstream_stderr: TextIO | None = None,
        pins: ToolPins | None = None,
        pin_path: Path | None = None,
    ) -> None:
        check_unique_names(upstreams)
        if call_timeout is not None and call_timeout <= 0:
            raise ProxyError(f"--call-timeout value {call_timeout!r} must be a positive number")
        self._gate = gate
        scrub_records(gate)
        self._specs = list(upstreams)
        self._call_timeout = call_timeout
        self._connect_timeout = connect_timeout
        self._report = report
        self._upstream_stderr = upstream_stderr
        self._pin_guard = PinGuard(gate, pins, pin_path=pin_path, report=report)
        self._pool: UpstreamPool | None = None
        self._late: LateEffects | None = None
        self._logs = contextlib.ExitStack()  # the redaction of the SDK's upstream log lines
        self._server: Server[Any] | None = None
        self._unservable: UnservableCalls | None = None
        self._upstreams: list[Upstream] = []
        self._local_tools: list[LocalTool] = []
        for tool in local_tools:
            self.add_local_tool(tool)

    def add_local_tool(self, tool: LocalTool) -> None:
        """Serve ``tool`` in-process as well; call before entering the proxy."""
        if self._server is not None:
            raise RuntimeError("add local tools before the proxy starts")
        if any(known.name == tool.name for known in self._local_tools):
            raise ProxyError(f"two local tools are named {tool.name!r}")
        self._local_tools.append(tool)

    @property
    def server(self) -> Server[Any]:
        """The MCP server (available inside ``async with``)."""
        if self._server is None:
            raise RuntimeError("the proxy is not running; use 'async with RecordingProxy(...)'")
        return self._server

    @property
    def upstreams(self) -> list[Upstream]:
        """The connected upstreams, in configuration order."""
        return list(self._upstreams)

    async def __aenter__(self) -> RecordingProxy:
        if not self._specs and not self._local_tools:
            raise ProxyError("nothing to serve: give an upstream command, --config or local tools")
        quiet_upstream_logs()
        self._logs.enter_context(redacting(_log_redaction(self._gate)))
        listeners = ClientListeners()

        async def on_notification(upstream: Upstream, notification: Any) -> None:
            if not relayed(notification):
                return  # a call's progress goes on its call's channel (:mod:`.calls`)
            method = str(getattr(notification, "method", ""))
            params = notification_params(notification)
            if await withheld_if_secret(self._gate, upstream.name, method, params):
                return
            await forward_upstream_notification(listeners, upstream, notification)

        relay = ClientRequestRelay(self._gate)

        async def on_client_request(upstream: Upstream, request: UpstreamRequest) -> UpstreamAnswer:
            return await relay.relay(upstream.name, upstream.in_flight, request)

        pool = UpstreamPool(
            self._specs,
            on_notification=on_notification,
            report=self._report,
            stderr=self._upstream_stderr,
            connect_timeout=self._connect_timeout,
            on_client_request=on_client_request,
            screen_stderr=functools.partial(screened_line, self._gate),
        )
        upstreams = await pool.__aenter__()
        try:
            catalog = ToolCatalog(
                upstreams,
                self._local_tools,
                report=self._report,
                on_listing=self._pin_guard.listed,
            )
            late = LateEffects(self._gate, grace_after_timeout(self._call_timeout))
            pipeline = CallPipeline(self._gate, catalog, call_timeout=self._call_timeout, late=late)
            reads = GatedReads(self._gate)
            instructions = None
            if len(upstreams) == 1:  # told to every client: screened once, here
                instructions = await screened_instructions(
                    self._gate, upstreams[0].name, upstreams[0].instructions
                )
            self._server = build_server(
                upstreams, catalog, pipeline, listeners, reads, instructions
            )
            self._unservable = UnservableCalls(self._gate, catalog, upstreams)
        except BaseException:
            await pool.__aexit__(None, None, None)
            self._logs.close()
            raise
        self._pool, self._upstreams, self._late = pool, upstreams, late
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        pool, self._pool = self._pool, None
        late, self._late = self._late, None
        self._server = None
        self._upstreams = []
        try:
            if late is not None:
                await late.wait_for_late_calls()
            if pool is not None:
                await pool.__aexit__(exc_type, exc_val, exc_tb)
        finally:
            try:
                if late is not None:
                    # what an upstream did after its last call: no later call will compare it
                    await late.compare()
            finally:
                self._logs.close()

    async def serve_stdio(
        self, *, stdin: IO[bytes] | None = None, stdout: IO[bytes] | None = None
    ) -> None:
        """Serve MCP on stdin/stdout (the process's own unless given) until stdin ends."""
        await serve_stdio(self.server, stdin=stdin, stdout=stdout)

    async def serve_http(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        token: str | None = None,
        on_ready: Callable[[HttpEndpoint], None] | None = None,
        stop: anyio.Event | None = None,
        **limits: Any,
    ) -> None:
        """Serve streamable HTTP on loopback until ``stop`` is set or the caller is cancelled.

        ``limits``: ``header_timeout`` and ``max_unproven`` of :func:`serve_http`.
        """
        await serve_http(
            self.server,
            host=host,
            port=port,
            token=token,
            on_ready=on_ready,
            stop=stop,
            unservable=None if self._unservable is None else self._unservable.refuse,
            **limits,
        )


def _log_redaction(gate: object) -> Callable[[str], str] | None:
    """The redaction of ``gate``'s records (its known secrets), for the SDK's log lines."""
    scrub = getattr(getattr(getattr(gate, "chain", None), "builder", None), "scrub", None)
    text = getattr(scrub, "text", None)
    return text if callable(text) else None


def scrub_records(gate: object) -> None:
    """Have ``gate``'s chain redact every string of every record with the known secrets its
    inspectors find (tool names, errors, reasons … as well as the parameters), unless the
    session that opened it set a redaction already."""
    from pytest_harness_audit.gate.record_scrub import RecordScrub

    builder = getattr(getattr(gate, "chain", None), "builder", None)
    inspectors = getattr(gate, "inspectors", None)
    if builder is not None and builder.scrub is None and isinstance(inspectors, list):
        builder.scrub = RecordScrub(inspectors)
