"""One ``tools/call`` through the proxy: gate → act → record.

Every call that names a tool leaves exactly one record: ``blocked`` when the gate refuses it,
``success`` or ``error`` after it ran (an upstream ``isError`` result, a protocol error, a dead
upstream, an unreachable HTTP upstream, a timeout or a cancellation are all ``error`` with
their message).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import anyio
import mcp_types as types
from mcp.shared.dispatcher import ProgressFnT
from mcp.shared.exceptions import MCPError

from pytest_harness_audit.doors.proxy.client_requests import CallOrigin
from pytest_harness_audit.doors.proxy.gate_protocol import CallStatus, DecisionLike, GateLike
from pytest_harness_audit.doors.proxy.local_tools import error_result, result_text
from pytest_harness_audit.doors.proxy.reachability import UPSTREAM_UNREACHABLE
from pytest_harness_audit.doors.proxy.routing import LocalRoute, Route, ToolCatalog, UpstreamRoute
from pytest_harness_audit.doors.proxy.upstream import UpstreamGone

BLOCKED_FALLBACK = "[blocked] [web4-policy] blocked by policy"
# `_meta` keys the SDK owns on each hop; everything else is forwarded to the upstream.
_HOP_META_PREFIX = "io.modelcontextprotocol/"
_HOP_META_KEYS = frozenset({"progressToken"})


def gate_tool_name(name: str, route: Route | None) -> str:
    """The name the gate judges: ``mcp__<server>__<tool>`` for upstream tools (the naming MCP
    hosts use, so policies and categories apply), the exposed name for local tools."""
    if isinstance(route, UpstreamRoute):
        return f"mcp__{route.upstream.name}__{route.tool}"
    return name


class CallPipeline:
    """Gate, run and record tool calls for the proxy's ``tools/call`` handler."""

    def __init__(
        self,
        gate: GateLike[Any],
        catalog: ToolCatalog,
        *,
        call_timeout: float | None = None,
    ) -> None:
        if call_timeout is not None and call_timeout <= 0:
            raise ValueError("call_timeout must be a positive number of seconds")
        self._gate = gate
        self._catalog = catalog
        self._call_timeout = call_timeout

    async def call(
        self,
        name: str,
        arguments: dict[str, Any],
        *,
        progress: ProgressFnT | None = None,
        meta: Mapping[str, Any] | None = None,
        origin: CallOrigin | None = None,
    ) -> types.CallToolResult:
        """Run one call; raises ``MCPError`` for protocol errors (unknown tool, bad params).

        ``origin`` is the client connection making the call: requests the upstream sends while
        it runs the call (sampling, elicitation, roots) are relayed to it.
        """
        if not name:
            # Not a call of any tool: a malformed request, answered like one (and no record,
            # which needs a tool name).
            raise MCPError(code=types.INVALID_PARAMS, message="Invalid params: empty tool name")
        route = self._catalog.resolve(name)
        if isinstance(route, LocalRoute) and route.tool.self_recording:
            return await self._run_unrecorded(route, arguments, meta)
        decision: DecisionLike = self._gate.decide(gate_tool_name(name, route), arguments)
        if decision.blocked:
            self._gate.record(decision, status=CallStatus.BLOCKED)
            return error_result(decision.message or BLOCKED_FALLBACK)
        if route is None:
            message = f"Unknown tool: {name}"
            self._gate.record(decision, status=CallStatus.ERROR, error_message=message)
            raise MCPError(code=types.INVALID_PARAMS, message=message)
        return await self._run_recorded(decision, route, arguments, progress, meta, origin)

    async def _run_recorded(
        self,
        decision: DecisionLike,
        route: Route,
        arguments: dict[str, Any],
        progress: ProgressFnT | None,
        meta: Mapping[str, Any] | None,
        origin: CallOrigin | None,
    ) -> types.CallToolResult:
        started = time.perf_counter()

        def record(status: str, **fields: Any) -> None:
            elapsed = (time.perf_counter() - started) * 1000.0
            self._gate.record(decision, status=status, duration_ms=elapsed, **fields)

        try:
            with self._deadline():
                result = await _act(route, arguments, progress, meta, origin)
        except TimeoutError:
            message = f"timeout after {self._call_timeout:g}s"
            record(CallStatus.ERROR, error_message=message)
            return error_result(message)
        except UpstreamGone as exc:
            record(CallStatus.ERROR, error_message=str(exc))
            return error_result(str(exc))
        except MCPError as exc:
            if exc.code == types.CONNECTION_CLOSED and isinstance(route, UpstreamRoute):
                message = f"upstream {route.upstream.name!r} stopped during the call"
                record(CallStatus.ERROR, error_message=message)
                return error_result(message)
            if exc.code == UPSTREAM_UNREACHABLE and isinstance(route, UpstreamRoute):
                message = f"upstream {route.upstream.name!r} {exc.error.message}"
                record(CallStatus.ERROR, error_message=message)
                return error_result(message)
            record(CallStatus.ERROR, error_message=exc.error.message)
            raise
        except anyio.get_cancelled_exc_class():
            record(CallStatus.ERROR, error_message="cancelled before completion")
            raise
        except Exception as exc:
            message = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            record(CallStatus.ERROR, error_message=message)
            return error_result(message)
        output = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        if result.is_error:
            record(CallStatus.ERROR, output=output, error_message=result_text(result) or None)
        else:
            record(CallStatus.SUCCESS, output=output)
        return result

    async def _run_unrecorded(
        self, route: LocalRoute, arguments: dict[str, Any], meta: Mapping[str, Any] | None
    ) -> types.CallToolResult:
        try:
            with self._deadline():
                return await route.tool.invoke(arguments, meta)
        except TimeoutError:
            return error_result(f"timeout after {self._call_timeout:g}s")

    def _deadline(self) -> AbstractContextManager[object]:
        if self._call_timeout is None:
            return nullcontext()
        return anyio.fail_after(self._call_timeout)


async def _act(
    route: Route,
    arguments: dict[str, Any],
    progress: ProgressFnT | None,
    meta: Mapping[str, Any] | None,
    origin: CallOrigin | None,
) -> types.CallToolResult:
    if isinstance(route, LocalRoute):
        return await route.tool.invoke(arguments, meta)
    return await route.upstream.call_tool(
        route.tool, arguments, progress=progress, meta=_forwarded_meta(meta), origin=origin
    )


def _forwarded_meta(meta: Mapping[str, Any] | None) -> types.RequestParamsMeta | None:
    if not meta:
        return None
    kept = {
        key: value
        for key, value in meta.items()
        if key not in _HOP_META_KEYS and not key.startswith(_HOP_META_PREFIX)
    }
    return types.RequestParamsMeta(**kept) if kept else None  # type: ignore[typeddict-item]
