"""One ``tools/call`` through the proxy: gate → act → record.

Every call that names a tool leaves exactly one record: ``blocked`` when the gate refuses it,
``success`` or ``error`` after it ran (an upstream ``isError`` result, a protocol error, a dead
upstream, an unreachable HTTP upstream, a timeout or a cancellation are all ``error`` with
their message). A name its upstream does not list is ``Unknown tool`` and is never sent
(:meth:`~.routing.ToolCatalog.lists_now`).

A call that is cancelled (the client's ``notifications/cancelled``, a 2026-07-28 client closing
its response stream, the call timeout, the proxy stopping) is recorded once it has stopped, so
the record and the workspace agree: a local tool is stopped and waited for (``Bash`` ends its
process group), and its record carries what it returned and, through the gate's inspectors,
what it changed; an upstream call gets ``notifications/cancelled`` and its record says so.
What an upstream does after its call timed out is compared when the proxy closes
(:mod:`.late_effects`).
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
from pydantic import ValidationError

from pytest_harness_audit.doors.proxy.approval import client_approver, client_name
from pytest_harness_audit.doors.proxy.client_requests import CallOrigin
from pytest_harness_audit.doors.proxy.envelope import ill_formed_text, not_sent
from pytest_harness_audit.doors.proxy.gate_failures import run_or_refuse
from pytest_harness_audit.doors.proxy.gate_protocol import GateLike
from pytest_harness_audit.doors.proxy.gated_reads import error_output, redacted_error
from pytest_harness_audit.doors.proxy.incoming import withheld_if_secret
from pytest_harness_audit.doors.proxy.late_effects import LateEffects
from pytest_harness_audit.doors.proxy.local_tools import CallStopped, error_result, result_text
from pytest_harness_audit.doors.proxy.outgoing import refuse_if_secret, request_tool_name
from pytest_harness_audit.doors.proxy.reachability import UPSTREAM_UNREACHABLE
from pytest_harness_audit.doors.proxy.routing import LocalRoute, Route, ToolCatalog, UpstreamRoute
from pytest_harness_audit.doors.proxy.secret_check import readable
from pytest_harness_audit.doors.proxy.upstream import UpstreamGone
from pytest_harness_audit.doors.proxy.warned import with_warning
from pytest_harness_audit.gate.approvals import door_approver
from pytest_harness_audit.gate.seam import Outcome, describe_exception

BLOCKED_FALLBACK = "[blocked] [web4-policy] blocked by policy"
# `_meta` keys the SDK owns on each hop; everything else is forwarded to the upstream.
_HOP_META_PREFIX = "io.modelcontextprotocol/"
_HOP_META_KEYS = frozenset({"progressToken"})
#: The notification an upstream reports a call's progress with.
PROGRESS_METHOD = "notifications/progress"
#: The parameter an upstream call's forwarded ``_meta`` is judged and recorded under.
META_PARAM = "_meta"


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
        late: LateEffects | None = None,
    ) -> None:
        if call_timeout is not None and call_timeout <= 0:
            raise ValueError("call_timeout must be a positive number of seconds")
        self._gate = gate
        self._catalog = catalog
        self._call_timeout = call_timeout
        self._late = late

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
        unlisted: bool | None = False
        if isinstance(route, UpstreamRoute) and not self._catalog.listed(route):
            # a name the upstream never listed is the client's text: refused (recorded under
            # the method, not that name) when it holds a secret
            tool = request_tool_name(route.upstream.name, "tools/call")
            await refuse_if_secret(self._gate, tool, {"name": route.tool}, origin)
            # a tool listed since the client's last listing is pinned (an alert) before it
            # runs; one the upstream does not list (a hidden tool), or cannot list now, is
            # never called
            listed = await self._catalog.lists_now(route)
            unlisted = None if listed is None else not listed
        if isinstance(route, LocalRoute) and route.tool.self_recording:
            return await self._run_unrecorded(route, arguments, meta)
        if progress is not None and isinstance(route, UpstreamRoute):
            progress = self._checked_progress(progress, route.upstream.name)
        replies: list[types.CallToolResult] = []
        errors: list[MCPError] = []

        async def act(_decision: object) -> Outcome:
            if route is None or unlisted:
                message = f"Unknown tool: {name}"
                raise_after = MCPError(code=types.INVALID_PARAMS, message=message)
                return Outcome.error(message, reraise=raise_after)
            if unlisted is None and isinstance(route, UpstreamRoute):
                # the upstream could not list its tools: nothing says it has this one
                message = (
                    f"upstream {route.upstream.name!r} unreachable: it could not list its "
                    f"tools, so {name} was not called"
                )
                raise_after = MCPError(code=UPSTREAM_UNREACHABLE, message=message)
                return Outcome.error(message, reraise=raise_after)
            if isinstance(route, UpstreamRoute):
                unsendable = ill_formed_text(_judged_params(arguments, meta), "arguments")
                if unsendable is not None:
                    message = not_sent(unsendable, route.upstream.name)
                    raise_after = MCPError(code=types.INVALID_PARAMS, message=message)
                    return Outcome.error(message, reraise=raise_after)
            return await self._act(route, arguments, progress, meta, origin, replies, errors)

        asker = None if origin is None else client_approver(origin)
        judged = (
            readable(_judged_params(arguments, meta))
            if isinstance(route, UpstreamRoute)
            else arguments
        )
        with door_approver(asker, "client" if origin is None else client_name(origin)):
            gated = await run_or_refuse(self._gate, gate_tool_name(name, route), judged, act)
        if isinstance(gated, str):  # the gate failed: refused and recorded
            return error_result(gated)
        if gated.blocked:
            return error_result(gated.error_message or BLOCKED_FALLBACK)
        if errors:
            # a protocol error stays one for the client, its code kept
            raise redacted_error(errors[0].error, gated) if gated.findings.redacted else errors[0]
        reply = _redacted_result(gated.output, replies) if gated.findings.redacted else replies[0]
        return with_warning(reply, gated.decision)

    async def _act(
        self,
        route: Route,
        arguments: dict[str, Any],
        progress: ProgressFnT | None,
        meta: Mapping[str, Any] | None,
        origin: CallOrigin | None,
        replies: list[types.CallToolResult],
        errors: list[MCPError],
    ) -> Outcome:
        """Run the allowed call; every failure becomes an error outcome with its reply (a
        JSON-RPC error of the upstream is also kept in ``errors``, answered as inspected)."""
        started = time.perf_counter()
        stopped: list[CallStopped] = []

        def failed(
            message: str,
            output: Any = None,
            reraise: BaseException | None = None,
            *,
            interrupted: bool = False,
        ) -> Outcome:
            if stopped:
                message = f"{message}; {stop_detail(stopped[0])}"
                if stopped[0].result is not None:
                    output = _dump(stopped[0].result)
            elif interrupted and isinstance(route, UpstreamRoute):
                # the SDK sends it when a request it issued is abandoned
                message = f"{message}; notifications/cancelled sent to {route.upstream.name!r}"
            replies.append(error_result(message))
            elapsed = (time.perf_counter() - started) * 1000.0
            return Outcome.error(message, output, duration_ms=elapsed, reraise=reraise)

        try:
            with self._deadline():
                try:
                    result = await _act(route, arguments, progress, meta, origin)
                except CallStopped as stop:
                    # raised inside the deadline so that a timeout is still told apart
                    stopped.append(stop)
                    raise stop.cancelled from None
        except TimeoutError:
            if self._late is not None and isinstance(route, UpstreamRoute):
                self._late.timed_out()  # the upstream may act on: compared when the proxy closes
            return failed(f"timeout after {self._call_timeout:g}s", interrupted=True)
        except UpstreamGone as exc:
            return failed(str(exc))
        except MCPError as exc:
            if exc.code == types.CONNECTION_CLOSED and isinstance(route, UpstreamRoute):
                return failed(f"upstream {route.upstream.name!r} stopped during the call")
            if exc.code == UPSTREAM_UNREACHABLE and isinstance(route, UpstreamRoute):
                return failed(f"upstream {route.upstream.name!r} {exc.error.message}")
            # the whole error (its data too) is inspected; the client gets it as inspected
            # (see ``call``), never the upstream's own text
            errors.append(exc)
            return failed(exc.error.message, error_output(exc.error))
        except ValidationError as exc:
            if isinstance(route, UpstreamRoute):
                # named, never quoted to the client: the validation text quotes the upstream's
                # answer (a task's id and status for an upstream answering with a task); that
                # text is still the call's output, inspected, so a secret in it is judged
                return failed(not_a_tool_result(route.upstream.name, exc), str(exc))
            return failed(describe_exception(exc))
        except anyio.get_cancelled_exc_class() as exc:
            message = (
                "cancelled"
                if stopped and _ran_to_end(stopped[0])
                else "cancelled before completion"
            )
            return failed(message, reraise=exc, interrupted=True)
        except Exception as exc:
            return failed(describe_exception(exc))
        replies.append(result)
        elapsed = (time.perf_counter() - started) * 1000.0
        output = _dump(result)
        if result.is_error:
            return Outcome("error", output, result_text(result) or None, duration_ms=elapsed)
        return Outcome.success(output, duration_ms=elapsed)

    async def _run_unrecorded(
        self, route: LocalRoute, arguments: dict[str, Any], meta: Mapping[str, Any] | None
    ) -> types.CallToolResult:
        try:
            with self._deadline():
                try:
                    return await route.tool.invoke(arguments, meta)
                except CallStopped as stop:
                    raise stop.cancelled from None
        except TimeoutError:
            return error_result(f"timeout after {self._call_timeout:g}s")

    def _checked_progress(self, relay: ProgressFnT, server: str) -> ProgressFnT:
        """``relay`` passing on an upstream's progress without a ``message`` holding a known
        secret (:mod:`.incoming`: the refusal is recorded, the numbers still go on)."""

        async def checked(progress: float, total: float | None, message: str | None) -> None:
            if message is not None and await withheld_if_secret(
                self._gate, server, PROGRESS_METHOD, {"message": message}
            ):
                message = None
            await relay(progress, total, message)

        return checked

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


def not_a_tool_result(server: str, error: ValidationError) -> str:
    """The error of a call whose upstream answered with something other than a tool result."""
    count = error.error_count()
    return (
        f"upstream {server!r} answered tools/call with no valid tool result "
        f"({count} validation error{'s' if count != 1 else ''}; the answer is not quoted)"
    )


def _ran_to_end(stop: CallStopped) -> bool:
    """Whether the cancelled tool completed anyway (it could not be stopped, or it succeeded
    just before the stop reached it)."""
    if stop.still_running is not None or stop.error is not None or stop.result is None:
        return False
    return not stop.stopped or not stop.result.is_error


def stop_detail(stop: CallStopped) -> str:
    """How a cancelled local call ended, for its record's error message."""
    if stop.still_running is not None:
        return (
            f"the tool had not returned {stop.still_running:g}s later "
            "(what it does after that is not in this record)"
        )
    if stop.error is not None:
        return f"the tool raised {describe_exception(stop.error)}"
    lines = result_text(stop.result).strip().splitlines() if stop.result is not None else []
    if not _ran_to_end(stop):
        return lines[0] if lines else "the tool stopped"
    return f"the tool ran to its end: {lines[0]}" if lines else "the tool ran to its end"


def _dump(result: types.CallToolResult) -> dict[str, Any]:
    dumped: dict[str, Any] = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    return dumped


def _kept_meta(meta: Mapping[str, Any] | None) -> dict[str, Any]:
    """The client's ``_meta`` keys the upstream receives (all but the hop keys)."""
    if not meta:
        return {}
    return {
        key: value
        for key, value in meta.items()
        if key not in _HOP_META_KEYS and not key.startswith(_HOP_META_PREFIX)
    }


def _forwarded_meta(meta: Mapping[str, Any] | None) -> types.RequestParamsMeta | None:
    kept = _kept_meta(meta)
    return types.RequestParamsMeta(**kept) if kept else None  # type: ignore[typeddict-item]


def _judged_params(arguments: dict[str, Any], meta: Mapping[str, Any] | None) -> dict[str, Any]:
    """What an upstream call sends, as the gate judges and records it: the arguments, plus the
    ``_meta`` keys forwarded with them under :data:`META_PARAM` — so a known secret there is
    refused like one in the arguments. A ``progressToken`` alone adds nothing."""
    kept = _kept_meta(meta)
    if not kept:
        return arguments
    key = META_PARAM
    while key in arguments:  # an argument of that name keeps its place
        key = f"_{key}"
    return {**arguments, key: kept}


def _redacted_result(output: Any, replies: list[types.CallToolResult]) -> types.CallToolResult:
    """The reply rebuilt from the inspected (redacted) output the agent may see."""
    if isinstance(output, Mapping):
        try:
            return types.CallToolResult.model_validate(dict(output))
        except ValueError:
            pass
    reply = replies[0] if replies else error_result("")
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=str(output))], is_error=reply.is_error
    )
