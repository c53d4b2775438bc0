"""Tool aggregation: which names the proxy lists, and where a called name goes.

With one upstream its tool names pass unchanged; with several, each is listed as
``<server>__<tool>``. Local (in-process) tools keep their own names and take precedence.
A call goes only to a tool its upstream has listed (:meth:`ToolCatalog.lists_now` lists again
for a name not seen yet, so the pins see a tool that appeared since the client's listing).

The proxy runs every call while the client waits, so that the gate sees the call and its result
together: it announces no ``tasks`` capability, and an upstream tool's ``execution`` (its MCP
2025-11-25 ``taskSupport``) is left out of the listing the client sees. A ``tools/call`` that
asks for a task anyway is run as a plain call, as the specification has a server without that
capability do (the upstream never receives ``task``), and ``tasks/*`` are not served.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import anyio
import mcp_types as types
from mcp.shared.exceptions import MCPError

from pytest_harness_audit.doors.proxy.errors import ProxyError
from pytest_harness_audit.doors.proxy.local_tools import LocalTool
from pytest_harness_audit.doors.proxy.upstream import ReportLine, Upstream, UpstreamGone

SEPARATOR = "__"


@dataclass(frozen=True)
class UpstreamRoute:
    """A call forwarded to ``upstream`` under the upstream's own tool name."""

    upstream: Upstream
    tool: str


@dataclass(frozen=True)
class LocalRoute:
    """A call served by an in-process tool."""

    tool: LocalTool


Route = UpstreamRoute | LocalRoute


class ToolCatalog:
    """The aggregated tool list and the name → destination table."""

    def __init__(
        self,
        upstreams: Sequence[Upstream],
        local_tools: Sequence[LocalTool] = (),
        *,
        report: ReportLine | None = None,
        on_listing: Callable[[Mapping[str, Sequence[types.Tool]]], object] | None = None,
    ) -> None:
        self._upstreams = list(upstreams)
        self._on_listing = on_listing  # tool pinning: sees each upstream's own listing
        self._by_server = {upstream.name: upstream for upstream in self._upstreams}
        self._local: dict[str, LocalTool] = {}
        self._report = report
        self._reported_shadowed: set[str] = set()
        self._listed: set[tuple[str, str]] = set()
        self._answered: set[str] = set()  # upstreams whose latest listing succeeded
        for tool in local_tools:
            self.add_local(tool)

    @property
    def prefixed(self) -> bool:
        """True when upstream tool names carry their server's name."""
        return len(self._upstreams) > 1

    def add_local(self, tool: LocalTool) -> None:
        """Register an in-process tool; names must be unique."""
        if tool.name in self._local:
            raise ProxyError(f"two local tools are named {tool.name!r}")
        self._local[tool.name] = tool

    def exposed_name(self, upstream: Upstream, tool: str) -> str:
        """The name an agent sees for ``tool`` of ``upstream``."""
        return f"{upstream.name}{SEPARATOR}{tool}" if self.prefixed else tool

    async def list_tools(self) -> list[types.Tool]:
        """Local tools, then each live upstream's tools (fetched concurrently), renamed."""
        listings: dict[str, list[types.Tool]] = {}

        async def fetch(upstream: Upstream) -> None:
            try:
                listings[upstream.name] = await upstream.list_tools()
            except (MCPError, UpstreamGone):
                return  # a failing upstream must not hide the other tools
            except Exception as exc:
                # a malformed listing: its validation text quotes the upstream's values (a
                # secret among them), so it is named, never quoted, and the upstream lists none
                if self._report is not None:
                    self._report(
                        f"harness-audit proxy: upstream {upstream.name!r} answered tools/list "
                        f"with no valid listing ({type(exc).__name__}); its tools are not listed"
                    )

        async with anyio.create_task_group() as group:
            for upstream in self._upstreams:
                if upstream.alive:
                    group.start_soon(fetch, upstream)
        self._answered = set(listings)
        if self._on_listing is not None:
            self._on_listing(
                {u.name: listings[u.name] for u in self._upstreams if u.name in listings}
            )

        tools = [tool.definition() for tool in self._local.values()]
        for upstream in self._upstreams:
            for tool in listings.get(upstream.name, []):
                self._listed.add((upstream.name, tool.name))
                name = self.exposed_name(upstream, tool.name)
                if name in self._local:
                    self._note_shadowed(name, upstream)
                    continue
                tools.append(_as_served(tool, name))
        return tools

    def listed(self, route: UpstreamRoute) -> bool:
        """Whether the route's upstream has listed its tool (a name it chose, not the client)."""
        return (route.upstream.name, route.tool) in self._listed

    async def lists_now(self, route: UpstreamRoute) -> bool | None:
        """Whether the route's upstream lists its tool, after listing every upstream again (so
        the pins see a tool that appeared); None when that upstream could not list."""
        await self.list_tools()
        if route.upstream.name not in self._answered:
            return None
        return self.listed(route)

    def resolve(self, name: str) -> Route | None:
        """Where a call to ``name`` goes, or None when no tool can have that name."""
        local = self._local.get(name)
        if local is not None:
            return LocalRoute(local)
        if not self._upstreams:
            return None
        if not self.prefixed:
            return UpstreamRoute(self._upstreams[0], name)
        server, sep, tool = name.partition(SEPARATOR)
        upstream = self._by_server.get(server)
        if not sep or upstream is None or not tool:
            return None
        return UpstreamRoute(upstream, tool)

    def _note_shadowed(self, name: str, upstream: Upstream) -> None:
        if self._report is not None and name not in self._reported_shadowed:
            self._reported_shadowed.add(name)
            self._report(
                f"harness-audit proxy: tool {name!r} of upstream {upstream.name!r} is hidden "
                "by the local tool of the same name"
            )


def _as_served(tool: types.Tool, name: str) -> types.Tool:
    """``tool`` as the proxy serves it: under ``name``, without task support."""
    if name == tool.name and tool.execution is None:
        return tool
    return tool.model_copy(update={"name": name, "execution": None})
