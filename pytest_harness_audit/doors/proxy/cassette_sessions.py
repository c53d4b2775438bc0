"""The two session faces of a cassette: one that records, one that answers from the tape.

The proxy relays resources, prompts and completions with ``upstream.session.send_request``.
``TapedSession`` wraps a real upstream's session and hands each such exchange to the tape;
``CassetteSession`` is the session of a replayed upstream, answering from the cassette.
"""

from __future__ import annotations

from typing import Any, Protocol, TypeVar

import mcp_types as types
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel

from pytest_harness_audit.doors.proxy.cassette_kinds import request_key
from pytest_harness_audit.doors.proxy.reachability import UPSTREAM_UNREACHABLE

ResultT = TypeVar("ResultT", bound=BaseModel)
#: Errors of the connection rather than answers of the server: not recorded.
TRANSPORT_CODES = frozenset({types.CONNECTION_CLOSED, UPSTREAM_UNREACHABLE})


class ExchangeTape(Protocol):
    """Receives one recorded non-tool exchange of an upstream."""

    def exchanged(
        self,
        upstream_name: str,
        key: tuple[str, str, dict[str, Any]],
        answer: BaseModel | MCPError,
    ) -> None:
        """``upstream_name`` answered the request keyed ``key`` with ``answer``."""


class Answerer(Protocol):
    """What a replayed upstream does with a request sent on its session."""

    async def answer_request(self, request: Any, result_type: type[ResultT]) -> ResultT:
        """The recorded answer to ``request``."""

    async def notify(self, notification: Any) -> None:
        """Take a notification from the proxy (nothing to do without an upstream)."""


class TapedSession:
    """A real upstream's ``ClientSession`` whose resource, prompt and completion exchanges
    are recorded; everything else is the wrapped session's own."""

    def __init__(self, inner: Any, upstream_name: str, tape: ExchangeTape) -> None:
        self.inner = inner
        self._upstream_name = upstream_name
        self._tape = tape

    async def send_request(
        self, request: Any, result_type: type[ResultT], *args: Any, **kwargs: Any
    ) -> ResultT:
        """Send ``request``; record it when it is a kind a cassette holds."""
        key = request_key(request)
        try:
            result = await self.inner.send_request(request, result_type, *args, **kwargs)
        except MCPError as exc:
            if key is not None and exc.code not in TRANSPORT_CODES:
                self._tape.exchanged(self._upstream_name, key, exc)
            raise
        if key is not None:
            self._tape.exchanged(self._upstream_name, key, result)
        return result  # type: ignore[no-any-return]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class CassetteSession:
    """The session of a replayed upstream: requests are answered from the cassette."""

    def __init__(
        self,
        answerer: Answerer,
        server_info: dict[str, Any] | None,
        capabilities: types.ServerCapabilities,
        instructions: str | None,
    ) -> None:
        self._answerer = answerer
        self.server_info = types.Implementation.model_validate(server_info) if server_info else None
        self.server_capabilities = capabilities
        self.instructions = instructions

    async def send_request(
        self, request: Any, result_type: type[ResultT], *args: Any, **kwargs: Any
    ) -> ResultT:
        """The recorded answer (or an MCP error naming the unmatched request)."""
        return await self._answerer.answer_request(request, result_type)

    async def send_notification(self, notification: Any) -> None:
        """Hand the notification to the replayed upstream."""
        await self._answerer.notify(notification)
