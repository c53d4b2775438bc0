"""Errors a user can cause. Each carries one clear, single-line message."""

from __future__ import annotations


class HarnessAuditError(Exception):
    """Base class of every error this package raises on purpose."""


class PolicyError(HarnessAuditError):
    """A policy file, preset or rule is invalid.

    The message names the file (when there is one), the line where known, the rule id and the
    field, so the user can fix the input without reading a traceback.
    """

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        line: int | None = None,
        rule_id: str | None = None,
        field: str | None = None,
    ) -> None:
        self.source = source
        self.line = line
        self.rule_id = rule_id
        self.field = field
        self.detail = message
        where = []
        if source:
            where.append(f"{source}:{line}" if line else source)
        if rule_id:
            where.append(f"rule {rule_id!r}")
        if field:
            where.append(f"field {field!r}")
        prefix = ", ".join(where)
        super().__init__(f"{prefix}: {message}" if prefix else message)


class ScenarioError(HarnessAuditError):
    """A scripted scenario file is invalid (names the file and the step)."""


class UsageError(HarnessAuditError):
    """A marker, option or command was used with bad arguments."""
