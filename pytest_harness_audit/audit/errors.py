"""Errors of the audit chain a user (or a crash) can cause; each carries one clear line."""

from __future__ import annotations

from pytest_harness_audit.errors import HarnessAuditError


class AuditError(HarnessAuditError):
    """A record draft, an audit option or a stored audit file is invalid."""


class ChainError(AuditError):
    """A chain is in a state that forbids the requested operation (torn tail, broken anchor …)."""


class SessionNotFoundError(AuditError):
    """No chain, session file or anchor exists for the requested session."""
