"""Connection hygiene for the HTTP proxy: half-open connections must not wedge it.

A connection that has not yet sent a request carrying the bearer token is *unproven*. Each one
must finish its first request's headers within ``header_timeout`` seconds or is closed, and at
most ``max_unproven`` are held at once: a new connection beyond that closes the oldest unproven
one. Connections that proved the token are never dropped for room, so a flood of idle or
trickling sockets (slowloris) costs the proxy a bounded number of descriptors, and the real
client, which sends its headers at once, is served.
"""

from __future__ import annotations

import asyncio
import hmac
from collections import OrderedDict
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

#: Seconds a new connection has to send its first request's headers.
DEFAULT_HEADER_TIMEOUT = 10.0
#: Connections without a valid token held at once (the oldest is closed to make room).
DEFAULT_MAX_UNPROVEN = 64


class UnprovenConnections:
    """The open connections that have not shown the token yet, oldest first."""

    def __init__(self, max_unproven: int) -> None:
        if max_unproven < 1:
            raise ValueError(f"max_unproven must be at least 1, got {max_unproven}")
        self.max_unproven = max_unproven
        self._open: OrderedDict[int, asyncio.Transport] = OrderedDict()
        #: How many connections were closed to make room (for tests and diagnostics).
        self.evicted = 0

    def __len__(self) -> int:
        return len(self._open)

    def admit(self, key: int, transport: asyncio.Transport) -> None:
        """Hold a new connection, closing the oldest unproven ones beyond the cap."""
        self._open[key] = transport
        while len(self._open) > self.max_unproven:
            _, oldest = self._open.popitem(last=False)
            self.evicted += 1
            oldest.abort()

    def settle(self, key: int) -> None:
        """The connection proved the token, or is gone: it no longer counts."""
        self._open.pop(key, None)


def guarded_protocol(
    token: str,
    *,
    header_timeout: float = DEFAULT_HEADER_TIMEOUT,
    max_unproven: int = DEFAULT_MAX_UNPROVEN,
) -> tuple[type[H11Protocol], UnprovenConnections]:
    """A uvicorn HTTP protocol class enforcing the header timeout and the unproven cap for
    ``token``, and the registry it counts unproven connections in."""
    expected = f"Bearer {token}".encode()
    registry = UnprovenConnections(max_unproven)

    class GuardedH11Protocol(H11Protocol):
        """uvicorn's h11 protocol with a first-request header deadline and the cap."""

        _header_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._header_timer = self.loop.call_later(header_timeout, self._headers_too_late)
            registry.admit(id(self), transport)

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self._header_timer is not None and self.headers is not None:
                # the first request's headers are in: the deadline is met
                self._header_timer.cancel()
                self._header_timer = None
                supplied = dict(self.headers).get(b"authorization", b"")
                if hmac.compare_digest(supplied, expected):
                    registry.settle(id(self))

        def connection_lost(self, exc: Exception | None) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None
            registry.settle(id(self))
            super().connection_lost(exc)

        def _headers_too_late(self) -> None:
            self._header_timer = None
            if not self.transport.is_closing():
                self.transport.abort()

    return GuardedH11Protocol, registry
