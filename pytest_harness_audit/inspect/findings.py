"""What inspecting a call saw (:class:`Findings`), as :class:`~pytest_harness_audit.inspect.
Inspector` returns it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_harness_audit.inspect.secrets import SecretFinding


@dataclass(frozen=True)
class Findings:
    """What inspection saw: alerts, the effects record field, secret findings, redaction
    (``redacted``: whether ``redacted_output`` replaces the output or payload, else as given)."""

    alerts: tuple[str, ...] = ()
    effects: Mapping[str, Any] = field(default_factory=dict)
    secrets: tuple[SecretFinding, ...] = ()
    redacted_output: Any = None
    redacted: bool = False
    unscanned: int = 0

    def __bool__(self) -> bool:
        return bool(self.alerts or self.effects)

    def to_record(self) -> dict[str, Any]:
        """Record fields: ``alerts``, ``effects`` and ``secrets`` (fingerprint, label,
        transform, span), each only when non-empty. Holds no secret value."""
        record: dict[str, Any] = {}
        if self.alerts:
            record["alerts"] = list(self.alerts)
        if self.effects:
            record["effects"] = dict(self.effects)
        if self.secrets:
            record["secrets"] = [finding.to_record() for finding in self.secrets]
        return record
