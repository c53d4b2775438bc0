"""``ReplayUpstream``: an upstream served from a cassette, with no process or connection.

It answers what the recorded upstream answered: its handshake (capabilities, instructions,
server info), tool listing, tool calls, resource and prompt listings and reads, and
completions. A recorded call during which the upstream asked the client something (sampling,
elicitation, roots) asks the client the same again, so the client and the audit chain see
what they saw when it was recorded.

Under ``--harness-audit-record=new`` it may also reach the real upstream: a request the
cassette lacks starts it (once, in the pool's task that holds this upstream) and is recorded.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol, TypeVar, cast

import anyio
import mcp_types as types
from mcp.shared.dispatcher import ProgressFnT
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel

from pytest_harness_audit.doors.proxy.cassette_kinds import (
    ACKNOWLEDGED,
    CLIENT_REQUESTS,
    dump,
    request_key,
)
from pytest_harness_audit.doors.proxy.cassette_model import Interaction, RecordedUpstream
from pytest_harness_audit.doors.proxy.cassette_sessions import CassetteSession
from pytest_harness_audit.doors.proxy.client_requests import CallOrigin
from pytest_harness_audit.doors.proxy.config import UpstreamSpec
from pytest_harness_audit.doors.proxy.errors import UpstreamStartError
from pytest_harness_audit.doors.proxy.reachability import first_of
from pytest_harness_audit.doors.proxy.upstream import ClientRequestSink, Upstream

ResultT = TypeVar("ResultT", bound=BaseModel)
#: Opens the real upstream (``open_upstream`` with the pool's settings).
Opener = Callable[[], AbstractAsyncContextManager[Upstream]]


class ReplaySource(Protocol):
    """The cassette a replayed upstream answers from (a ``CassetteTape``)."""

    def answer(self, call: Interaction, *, repeat: bool) -> Interaction | None:
        """The recorded exchange for ``call``, or None."""

    def unmatched(self, call: Interaction) -> str:
        """The one line naming an unmatched request."""

    def as_served(self, value: object) -> Any:
        """A recorded value as served in this workspace."""

    def as_recorded(self, value: object) -> object:
        """A live value as it would be written in the cassette."""

    def describe(self, detail: str) -> str:
        """``detail`` as one line naming the cassette."""

    def report(self, line: str) -> None:
        """Report one line (stderr)."""

    def watch(self, upstream: Upstream) -> None:
        """Record a live upstream's exchanges from now on."""


class ReplayUpstream(Upstream):
    """An upstream served from a cassette: no process, no connection (unless ``live``)."""

    def __init__(
        self,
        spec: UpstreamSpec,
        recorded: RecordedUpstream,
        source: ReplaySource,
        *,
        live: bool = False,
        ask_client: ClientRequestSink | None = None,
    ) -> None:
        super().__init__(spec, cast(Any, None))
        self.reconnector = None
        self._recorded = recorded
        self._source = source
        self._capabilities = types.ServerCapabilities.model_validate(recorded.capabilities)
        self.session = cast(
            Any,
            CassetteSession(self, recorded.server_info, self._capabilities, recorded.instructions),
        )
        self._can_go_live = live
        self._ask_client = ask_client
        self._wanted = anyio.Event()
        self._ready = anyio.Event()
        self._live: Upstream | None = None
        self._live_error = ""

    @property
    def capabilities(self) -> types.ServerCapabilities:
        """The capabilities the recorded upstream announced."""
        return self._capabilities

    @property
    def instructions(self) -> str | None:
        """The recorded instructions."""
        return self._recorded.instructions

    async def list_tools(self) -> list[types.Tool]:
        """The recorded listing."""
        tools = self._source.as_served(self._recorded.tools)
        return [types.Tool.model_validate(tool) for tool in tools]

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any],
        *,
        progress: ProgressFnT | None = None,
        meta: types.RequestParamsMeta | None = None,
        origin: CallOrigin | None = None,
    ) -> types.CallToolResult:
        """The recorded result (or MCP error) of the matching call; an error result naming
        the call when none matches."""
        call = Interaction(self.name, name, dict(arguments))
        recorded = self._source.answer(call, repeat=not self._can_go_live)
        if recorded is None:
            live = await self._live_upstream(call)
            if isinstance(live, str):
                return types.CallToolResult(
                    content=[types.TextContent(type="text", text=live)], is_error=True
                )
            return await live.call_tool(
                name, arguments, progress=progress, meta=meta, origin=origin
            )
        await self._ask_again(recorded, origin)
        if recorded.error is not None:
            raise MCPError.from_error_data(
                types.ErrorData.model_validate(self._source.as_served(recorded.error))
            )
        return types.CallToolResult.model_validate(self._source.as_served(recorded.result))

    async def answer_request(self, request: Any, result_type: type[ResultT]) -> ResultT:
        """The recorded answer to a resource, prompt or completion request."""
        method = getattr(request, "method", "")
        if method in ACKNOWLEDGED:
            return result_type.model_validate({})
        key = request_key(request)
        if key is None:
            raise MCPError(
                code=types.METHOD_NOT_FOUND, message=f"{method} is not replayed from a cassette"
            )
        call = Interaction(self.name, key[1], key[2], method=key[0])
        recorded = self._source.answer(call, repeat=not self._can_go_live)
        if recorded is None:
            live = await self._live_upstream(call)
            if isinstance(live, str):
                raise MCPError(code=types.INVALID_PARAMS, message=live)
            answer: ResultT = await live.session.send_request(request, result_type)
            return answer
        if recorded.error is not None:
            raise MCPError.from_error_data(
                types.ErrorData.model_validate(self._source.as_served(recorded.error))
            )
        return result_type.model_validate(self._source.as_served(recorded.result))

    async def notify(self, notification: Any) -> None:
        """Pass a notification on to the real upstream once it runs; else nothing to do."""
        if self._live is not None and self._live.alive:
            await self._live.session.send_notification(notification)

    async def _ask_again(self, recorded: Interaction, origin: CallOrigin | None) -> None:
        """Ask the client what the upstream asked it during the recorded call."""
        for item in recorded.client_requests:
            served = self._source.as_served({k: v for k, v in item.items() if k != "answer"})
            request = CLIENT_REQUESTS[item["method"]].model_validate(served)
            if self._ask_client is None:
                answer: Any = types.ErrorData(code=types.INVALID_REQUEST, message="no client")
            else:
                with self.in_flight.track(origin):
                    answer = await self._ask_client(self, cast(Any, request))
            if self._source.as_recorded(answer_form(answer)) != item.get("answer"):
                self._source.report(
                    self._source.describe(
                        f"the client answered {item['method']} of {recorded.method} "
                        f"{recorded.name!r} of upstream {self.name!r} differently than when "
                        "recorded; the recorded result is served"
                    )
                )

    async def _live_upstream(self, call: Interaction) -> Upstream | str:
        """The real upstream (started on first need), or the line saying why there is none."""
        line = self._source.unmatched(call)
        if not self._can_go_live:
            self._source.report(line)
            return line
        self._wanted.set()
        await self._ready.wait()
        if self._live is None or not self._live.alive:
            reason = self._live_error or f"upstream {self.name!r} is not running"
            message = f"{line}, and the upstream could not record it: {reason}"
            self._source.report(message)
            return message
        return self._live

    async def hold(self, stop: anyio.Event, opener: Opener | None) -> None:
        """Serve until ``stop``; start the real upstream in this task when a request the
        cassette lacks needs it (``opener``; ``None``: never)."""
        try:
            if opener is not None:
                await first_of(stop, self._wanted)
            if opener is None or stop.is_set():
                await stop.wait()
                return
            try:
                async with opener() as live:
                    live.tape = None
                    self._source.watch(live)
                    self._live = live
                    self._ready.set()
                    await stop.wait()
            except UpstreamStartError as exc:
                self._live_error = exc.reason
                self._ready.set()
                await stop.wait()
        finally:
            self._live_error = self._live_error or "the proxy is stopping"
            self._ready.set()


def answer_form(answer: BaseModel) -> dict[str, Any]:
    """A client's answer as a cassette writes it: ``{result: …}`` or ``{error: …}``."""
    if isinstance(answer, types.ErrorData):
        return {"error": dump(answer)}
    return {"result": dump(answer)}
