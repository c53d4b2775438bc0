"""The lines of a session report: one frozen dataclass per kind of record, each with the YAML
mapping it renders as (see :mod:`pytest_harness_audit.readers.report`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pytest_harness_audit.readers.verdict import Verdict


@dataclass(frozen=True)
class CallLine:
    """One tool call (or message send) of the report.

    A message send shows its ``outcome`` (``sent``, ``refused`` …) and the ``refusal`` reason
    instead of an output hash: its result is made of random post and operation ids.
    """

    position: int
    tool: str
    category: str
    target: str | None
    decision: str | None
    rule: str | None
    status: str
    output: str | None = None
    dry_run: bool = False
    quarantined: bool = False
    firewall: str | None = None
    outcome: str | None = None
    refusal: str | None = None
    verdict: Verdict | None = None

    def to_dict(self) -> dict[str, Any]:
        """The line's YAML mapping; optional keys only when they say something."""
        data: dict[str, Any] = {
            "position": self.position,
            "tool": self.tool,
            "category": self.category,
        }
        if self.target is not None:
            data["target"] = self.target
        data.update(decision=self.decision, rule=self.rule, status=self.status)
        if self.dry_run:
            data["enforced"] = False
        if self.quarantined:
            data["quarantine"] = True
        if self.firewall is not None:
            data["firewall"] = self.firewall
        if self.outcome is not None:
            data["outcome"] = self.outcome
        if self.refusal is not None:
            data["refusal"] = self.refusal
        if self.output is not None:
            data["output"] = self.output
        if self.verdict is not None:
            data["verdict"] = self.verdict.value
        return data


@dataclass(frozen=True)
class EscalationLine:
    """One immune escalation: its level, trigger, score, scope and the evidence positions."""

    position: int
    level: str
    trigger: str
    score: float | None
    scope: str
    evidence: tuple[int | str, ...]
    verdict: Verdict | None = None

    def to_dict(self) -> dict[str, Any]:
        """The line's YAML mapping."""
        data: dict[str, Any] = {
            "position": self.position,
            "level": self.level,
            "trigger": self.trigger,
            "score": self.score,
            "scope": self.scope,
            "evidence": list(self.evidence),
        }
        if self.verdict is not None:
            data["verdict"] = self.verdict.value
        return data


@dataclass(frozen=True)
class LiftLine:
    """One lift of a quarantine, with its reason."""

    position: int
    previous_level: str | None
    scopes: tuple[str, ...]
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """The line's YAML mapping."""
        return {
            "position": self.position,
            "from": self.previous_level,
            "scopes": list(self.scopes),
            "reason": self.reason,
        }


@dataclass(frozen=True)
class AlertLine:
    """One alert raised on a call (``credential_access``, ``memory_write`` …)."""

    position: int
    tool: str
    alert: str

    def to_dict(self) -> dict[str, Any]:
        """The line's YAML mapping."""
        return {"position": self.position, "tool": self.tool, "alert": self.alert}


@dataclass(frozen=True)
class OtherLine:
    """A record of a kind the report has no section for (kept so nothing goes unseen)."""

    position: int
    kind: str
    tool: str
    verdict: Verdict | None = None

    def to_dict(self) -> dict[str, Any]:
        """The line's YAML mapping."""
        data: dict[str, Any] = {"position": self.position, "kind": self.kind, "tool": self.tool}
        if self.verdict is not None:
            data["verdict"] = self.verdict.value
        return data
