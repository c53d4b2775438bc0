"""Requests an upstream sends to the client — sampling, elicitation, roots — relayed to it.

An upstream asks while it runs a ``tools/call``; the request goes to the client connection that
made that call (on the call's own channel, so streamable HTTP delivers it on the call's
stream), and the client's answer — result or error — goes back to the upstream. A client that
did not declare the capability in ``initialize`` is never asked: the upstream gets
``-32601`` (method not found) naming the missing capability.

Each relayed request is judged and recorded by the gate like a call, under the name
``mcp__<server>__<method>`` (e.g. ``mcp__docs__sampling/createMessage``), so a policy can
refuse it and the audit chain shows what the upstream asked and what the client answered.
The answer leaves for the upstream: one holding a known secret of the workspace is not
relayed (the upstream gets ``-32600``; the record is ``error``, with the answer, redacted,
as its output).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.session import ServerSession
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from pydantic import BaseModel

from pytest_harness_audit.doors.proxy.gate_failures import run_or_refuse
from pytest_harness_audit.doors.proxy.gate_protocol import GateLike
from pytest_harness_audit.doors.proxy.secret_check import SECRET_REFUSAL, holds_secret
from pytest_harness_audit.gate.seam import Outcome, describe_exception

#: What an upstream may ask the client, as relayed by the proxy.
UpstreamRequest = types.CreateMessageRequest | types.ElicitRequest | types.ListRootsRequest
#: What goes back to the upstream: the client's result, or the error it (or the proxy) gave.
UpstreamAnswer = (
    types.CreateMessageResult
    | types.CreateMessageResultWithTools
    | types.ElicitResult
    | types.ListRootsResult
    | types.ErrorData
)


@dataclass(frozen=True)
class CallOrigin:
    """The client connection behind one forwarded ``tools/call``."""

    session: ServerSession
    request_id: types.RequestId | None
    #: Identifies the client connection (one ``ServerSession`` is built per request).
    connection: object

    @classmethod
    def of(cls, ctx: ServerRequestContext[Any, Any]) -> CallOrigin:
        """The origin of the request handled under ``ctx``."""
        # The SDK keeps the per-connection state private; its identity is all that is needed.
        connection = getattr(ctx.session, "_connection", ctx.session)
        return cls(session=ctx.session, request_id=ctx.request_id, connection=connection)


class NoOrigin(Exception):
    """No single client connection can be asked (no call in flight, or several clients')."""


class InFlightCalls:
    """The forwarded calls an upstream is running, so its requests find their client."""

    def __init__(self) -> None:
        self._origins: list[CallOrigin] = []

    @contextmanager
    def track(self, origin: CallOrigin | None) -> Iterator[None]:
        """Count ``origin`` as in flight for the duration of the block."""
        if origin is None:
            yield
            return
        self._origins.append(origin)
        try:
            yield
        finally:
            self._origins.remove(origin)

    def origin(self, upstream_name: str) -> CallOrigin:
        """The call whose client the upstream is asking (the most recent one of that client).

        Requests carry no reference to the call that caused them, so when calls from more
        than one client connection are in flight on the same upstream, the proxy refuses
        rather than risk asking the wrong client.
        """
        if not self._origins:
            raise NoOrigin(f"no client call is in progress on upstream {upstream_name!r}")
        connections = {id(origin.connection) for origin in self._origins}
        if len(connections) > 1:
            raise NoOrigin(
                f"calls from {len(connections)} clients are in progress on upstream "
                f"{upstream_name!r}; the proxy cannot tell which client is asked"
            )
        return self._origins[-1]


def missing_capability(
    capabilities: types.ClientCapabilities | None, request: UpstreamRequest
) -> str | None:
    """The capability the client lacks for ``request`` (as named in MCP), or None."""
    caps = capabilities or types.ClientCapabilities()
    if isinstance(request, types.CreateMessageRequest):
        if caps.sampling is None:
            return "sampling"
        if (request.params.tools or request.params.tool_choice) and caps.sampling.tools is None:
            return "sampling.tools"
        return None
    if isinstance(request, types.ElicitRequest):
        elicitation = caps.elicitation
        if elicitation is None:
            return "elicitation"
        if isinstance(request.params, types.ElicitRequestURLParams):
            return None if elicitation.url is not None else "elicitation.url"
        # An empty elicitation object means form mode (the spec's backwards compatibility).
        if elicitation.form is None and elicitation.url is not None:
            return "elicitation.form"
        return None
    return "roots" if caps.roots is None else None


def _result_type(request: UpstreamRequest) -> type[BaseModel]:
    if isinstance(request, types.CreateMessageRequest):
        if request.params.tools or request.params.tool_choice:
            return types.CreateMessageResultWithTools
        return types.CreateMessageResult
    if isinstance(request, types.ElicitRequest):
        return types.ElicitResult
    return types.ListRootsResult


def _without_meta(request: UpstreamRequest) -> UpstreamRequest:
    """The upstream hop's ``_meta`` stays on that hop; the client hop gets its own."""
    if request.params is None:
        return request
    params = request.params.model_copy(update={"meta": None})
    return request.model_copy(update={"params": params})


def _dump(model: BaseModel | None) -> dict[str, Any]:
    if model is None:
        return {}
    dumped: dict[str, Any] = model.model_dump(by_alias=True, mode="json", exclude_none=True)
    return dumped


class ClientRequestRelay:
    """Gate, relay and record the requests upstreams send to the client."""

    def __init__(self, gate: GateLike[Any]) -> None:
        self._gate = gate

    async def relay(
        self, upstream_name: str, in_flight: InFlightCalls, request: UpstreamRequest
    ) -> UpstreamAnswer:
        """Ask the client behind the running call; return its answer for the upstream."""
        params = _dump(request.params)
        params.pop("_meta", None)
        answers: list[UpstreamAnswer] = []

        async def act(_decision: object) -> Outcome:
            return await self._ask_client(upstream_name, in_flight, request, answers)

        tool = f"mcp__{upstream_name}__{request.method}"
        gated = await run_or_refuse(self._gate, tool, params, act)
        if isinstance(gated, str):  # the gate failed: refused and recorded
            return types.ErrorData(code=types.INVALID_REQUEST, message=gated)
        if gated.blocked:
            return types.ErrorData(code=types.INVALID_REQUEST, message=gated.error_message or "")
        return answers[0]

    async def _ask_client(
        self,
        upstream_name: str,
        in_flight: InFlightCalls,
        request: UpstreamRequest,
        answers: list[UpstreamAnswer],
    ) -> Outcome:
        started = time.perf_counter()

        def refuse(code: int, message: str) -> Outcome:
            answers.append(types.ErrorData(code=code, message=message))
            elapsed = (time.perf_counter() - started) * 1000.0
            return Outcome.error(message, duration_ms=elapsed)

        try:
            origin = in_flight.origin(upstream_name)
        except NoOrigin as exc:
            return refuse(types.INVALID_REQUEST, str(exc))
        missing = missing_capability(origin.session.client_capabilities, request)
        if missing is not None:
            return refuse(
                types.METHOD_NOT_FOUND,
                f"{request.method} is not supported by the client "
                f"(it declared no '{missing}' capability)",
            )
        if not origin.session.can_send_request:
            return refuse(
                types.METHOD_NOT_FOUND,
                f"{request.method}: the client's connection cannot take requests",
            )
        try:
            result = await origin.session.send_request(
                _without_meta(request),
                _result_type(request),
                metadata=ServerMessageMetadata(related_request_id=origin.request_id),
            )
        except MCPError as exc:
            return refuse(exc.error.code, exc.error.message)
        except Exception as exc:
            return refuse(types.INTERNAL_ERROR, describe_exception(exc))
        answer = _dump(result)
        elapsed = (time.perf_counter() - started) * 1000.0
        if holds_secret(self._gate, f"mcp__{upstream_name}__{request.method}", answer):
            # the answer would leave for the upstream: it gets a refusal, and the record keeps
            # the answer as output (inspected, redacted and judged like any output)
            answers.append(types.ErrorData(code=types.INVALID_REQUEST, message=SECRET_REFUSAL))
            return Outcome.error(
                f"{SECRET_REFUSAL}; the client's answer was not relayed to {upstream_name!r}",
                output=answer,
                duration_ms=elapsed,
            )
        answers.append(result)  # type: ignore[arg-type]
        return Outcome.success(answer, duration_ms=elapsed)
