"""The MCP server face of the proxy, built on the SDK's low-level ``Server``.

``tools/list`` and ``tools/call`` are the proxy's own (aggregation and the gated pipeline);
the rest of the surface is relayed by ``Passthrough`` (resource reads and prompt gets gated
too). Notifications an upstream sends outside
a request (log messages, list changes, resource updates) are fanned out to the connected
clients; progress of a forwarded call travels on that call's own channel, and so do the
requests an upstream sends to the client during the call (see ``client_requests``). A client's
``notifications/roots/list_changed`` goes to every upstream.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.session import ServerSession
from mcp.shared.dispatcher import ProgressFnT
from mcp.shared.exceptions import MCPError

from pytest_harness_audit._version import __version__
from pytest_harness_audit.doors.proxy.calls import CallPipeline
from pytest_harness_audit.doors.proxy.client_requests import CallOrigin
from pytest_harness_audit.doors.proxy.gated_reads import GatedReads
from pytest_harness_audit.doors.proxy.incoming import screened, server_of
from pytest_harness_audit.doors.proxy.passthrough import Passthrough
from pytest_harness_audit.doors.proxy.routing import ToolCatalog
from pytest_harness_audit.doors.proxy.upstream import Upstream

SERVER_NAME = "harness-audit-proxy"
Context = ServerRequestContext[Any, Any]
# Keep only the most recent client connections for fan-out; older ones are long gone.
_MAX_LISTENERS = 256
_FORWARDED_NOTIFICATIONS = (
    types.LoggingMessageNotification,
    types.ToolListChangedNotification,
    types.ResourceListChangedNotification,
    types.PromptListChangedNotification,
    types.ResourceUpdatedNotification,
    types.ElicitCompleteNotification,
)


class ClientListeners:
    """Client connections that can take notifications outside a request."""

    def __init__(self) -> None:
        self._sessions: list[ServerSession] = []

    async def on_initialized(self, ctx: Context, params: types.NotificationParams) -> None:
        """Remember a connection once its handshake completes."""
        self._sessions.append(ctx.session)
        del self._sessions[:-_MAX_LISTENERS]

    async def broadcast(self, notification: types.ServerNotification) -> None:
        """Send ``notification`` to every known connection, forgetting closed ones."""
        for session in list(self._sessions):
            try:
                await session.send_notification(notification)
            except Exception:
                self._sessions.remove(session)


class _ProxyServer(Server[Any]):
    """A low-level server whose default initialization options carry the list-changed flags."""

    def __init__(self, *args: Any, notification_options: NotificationOptions, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._default_notification_options = notification_options

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        """Initialization options; list-changed flags default to what the upstreams announce."""
        return super().create_initialization_options(
            notification_options or self._default_notification_options,
            experimental_capabilities,
            extensions,
        )


def build_server(
    upstreams: list[Upstream],
    catalog: ToolCatalog,
    pipeline: CallPipeline,
    listeners: ClientListeners,
    reads: GatedReads,
    instructions: str | None = None,
) -> Server[Any]:
    """Assemble the proxy's MCP server over connected upstreams (``reads`` gates resource
    reads and prompt gets as ``pipeline`` gates tool calls); ``instructions``: what the
    clients are told at ``initialize`` (the one upstream's own, screened by the caller)."""
    passthrough = Passthrough(upstreams, reads)

    async def list_tools(
        ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        listing = types.ListToolsResult(tools=await catalog.list_tools())
        return await screened(reads.gate, server_of(upstreams), "tools/list", listing)

    async def call_tool(ctx: Context, params: types.CallToolRequestParams) -> types.CallToolResult:
        raw_meta = (ctx.params or {}).get("_meta")
        meta: Mapping[str, Any] | None = raw_meta if isinstance(raw_meta, Mapping) else None
        forward_progress: ProgressFnT | None = None
        if meta is not None and "progressToken" in meta:

            async def forward_progress(
                progress: float, total: float | None, message: str | None
            ) -> None:
                await ctx.session.report_progress(progress, total, message)

        return await pipeline.call(
            params.name,
            dict(params.arguments or {}),
            progress=forward_progress,
            meta=meta,
            origin=CallOrigin.of(ctx),
        )

    async def roots_changed(ctx: Context, params: types.NotificationParams) -> None:
        for upstream in upstreams:
            if upstream.alive:
                # A closed upstream must not stop the others from hearing it.
                with contextlib.suppress(
                    MCPError, anyio.BrokenResourceError, anyio.ClosedResourceError
                ):
                    await upstream.session.send_notification(types.RootsListChangedNotification())

    server = _ProxyServer(
        SERVER_NAME,
        version=__version__,
        instructions=instructions,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        notification_options=passthrough.notification_options(),
    )
    # Tracing middleware is a no-op without an exporter but costs time on every message.
    server.middleware = []
    passthrough.register(server)
    server.add_notification_handler(
        "notifications/initialized", types.NotificationParams, listeners.on_initialized
    )
    server.add_notification_handler(
        "notifications/roots/list_changed", types.NotificationParams, roots_changed
    )
    return server


def relayed(notification: object) -> bool:
    """Whether an upstream's notification outside a request is relayed to the clients."""
    return isinstance(notification, _FORWARDED_NOTIFICATIONS)


async def forward_upstream_notification(
    listeners: ClientListeners, upstream: Upstream, notification: types.ServerNotification
) -> None:
    """Relay an upstream's out-of-request notification to the connected clients."""
    if relayed(notification):
        await listeners.broadcast(notification)
