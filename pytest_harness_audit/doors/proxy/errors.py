"""Errors of the recording proxy that a user can cause (bad config, bad address, dead upstream)."""

from __future__ import annotations

from pytest_harness_audit.errors import HarnessAuditError


class ProxyError(HarnessAuditError):
    """The proxy cannot start or serve as asked; the message names the input at fault."""


class UpstreamStartError(ProxyError):
    """An upstream MCP server could not be started or did not complete the MCP handshake."""

    def __init__(self, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        #: The cause alone, without the server's name (e.g. ``unreachable at URL: …``).
        self.reason = reason if reason is not None else message
