"""What the immune ladder reads and writes: call events, escalations, lifts and quarantines.

Each type converts to and from a JSON-safe dict (camelCase keys, like the audit records), so the
ladder's steps can be stored in the audit chain and read back by another process.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from pytest_harness_audit.errors import HarnessAuditError
from pytest_harness_audit.immune.alerts import (
    CREDENTIAL_ACCESS,
    CREDENTIAL_OBJECT_READ,
    CREDENTIAL_READ,
    NETWORK,
)

Level = Literal["observe", "notice", "quarantine"]
EscalationLevel = Literal["notice", "quarantine"]
Decision = Literal["allow", "warn", "deny"]
Status = Literal["success", "error", "blocked"]
ScopeKind = Literal["session", "category", "tool"]

#: The ladder's rungs, lowest first.
LEVELS: tuple[Level, ...] = ("observe", "notice", "quarantine")
DECISIONS: tuple[Decision, ...] = ("allow", "warn", "deny")
STATUSES: tuple[Status, ...] = ("success", "error", "blocked")
SCOPES: tuple[ScopeKind, ...] = ("session", "category", "tool")
#: Prefix of the message a quarantined call is blocked with.
QUARANTINE_PREFIX = "[web4-immune] quarantined: "

_SHOWN_EVIDENCE = 5


class ImmuneRecordError(HarnessAuditError):
    """A stored call event, escalation or lift cannot be read back (names the field and value)."""


def level_rank(level: str) -> int:
    """Position of ``level`` on the ladder (``observe`` = 0)."""
    return LEVELS.index(cast(Level, level))


@dataclass(frozen=True)
class CallEvent:
    """One recorded tool call, as the ladder sees it.

    ``decision`` is the policy's; ``enforced`` is false for a dry-run deny; ``status`` is the
    outcome (``blocked`` when the gate refused the call); ``alerts`` come from
    :func:`~pytest_harness_audit.immune.alerts.alerts_for`; ``timestamp`` is in seconds.
    """

    record_id: str
    tool: str
    category: str
    input_hash: str
    decision: Decision
    enforced: bool
    status: Status
    alerts: tuple[str, ...] = ()
    timestamp: float = 0.0

    def __post_init__(self) -> None:
        _require_choice("decision", self.decision, DECISIONS)
        _require_choice("status", self.status, STATUSES)
        read = CREDENTIAL_READ in self.alerts or CREDENTIAL_OBJECT_READ in self.alerts
        if read and CREDENTIAL_ACCESS not in self.alerts:
            # a credential file the call's processes read counts as the access it is: the
            # `credential_access` trigger and the flows that start with it (exfiltration)
            object.__setattr__(self, "alerts", (*self.alerts, CREDENTIAL_ACCESS))

    @property
    def categories(self) -> tuple[str, ...]:
        """The call's category and, for a command that is a network exchange (alert
        ``network``), ``network``: what a flow's ``categories`` are matched on."""
        if NETWORK in self.alerts and self.category != NETWORK:
            return (self.category, NETWORK)
        return (self.category,)

    @property
    def failed(self) -> bool:
        """Whether the call did not succeed (errored or was blocked)."""
        return self.status != "success"

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form (camelCase keys)."""
        return {
            "recordId": self.record_id,
            "tool": self.tool,
            "category": self.category,
            "inputHash": self.input_hash,
            "decision": self.decision,
            "enforced": self.enforced,
            "status": self.status,
            "alerts": list(self.alerts),
            "timestamp": self.timestamp,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CallEvent:
        """Read back :meth:`to_dict` output; a bad field raises :class:`ImmuneRecordError`."""
        reader = _Reader(data, "call event")
        return cls(
            record_id=reader.text("recordId"),
            tool=reader.text("tool"),
            category=reader.text("category"),
            input_hash=reader.text("inputHash"),
            decision=cast(Decision, reader.choice("decision", DECISIONS)),
            enforced=reader.flag("enforced"),
            status=cast(Status, reader.choice("status", STATUSES)),
            alerts=reader.texts("alerts"),
            timestamp=reader.number("timestamp"),
        )


@dataclass(frozen=True)
class Escalation:
    """The ladder reached ``level``: a chain record with the evidence that took it there.

    ``trigger`` is the trigger with the largest share of the score (``flow:<id>`` for flows);
    ``contributions`` lists every trigger's share, largest first; ``evidence`` holds the record
    ids behind the score; ``triggered_by`` is the call that tipped it. ``scope``/``scope_value``
    say what a quarantine covers (``scope_value`` is ``None`` for the session).
    """

    level: EscalationLevel
    trigger: str
    score: float
    evidence: tuple[str, ...]
    scope: ScopeKind
    scope_value: str | None
    threshold: float = 0.0
    contributions: tuple[tuple[str, float], ...] = ()
    triggered_by: str | None = None
    timestamp: float = 0.0

    def __post_init__(self) -> None:
        _require_choice("level", self.level, LEVELS[1:])
        _require_choice("scope", self.scope, SCOPES)
        if (self.scope == "session") != (self.scope_value is None):
            raise ImmuneRecordError(
                f"escalation: field 'scopeValue' must be null exactly when the scope is "
                f"'session', got scope {self.scope!r} with value {self.scope_value!r}"
            )

    def describe(self) -> str:
        """One line for reports and failure messages."""
        where = "" if self.scope_value is None else f" {self.scope} {self.scope_value!r}"
        shares = ", ".join(f"{name} {weight:g}" for name, weight in self.contributions)
        return (
            f"{self.level}{where}: {self.trigger} brought the score to {self.score:g} "
            f"(threshold {self.threshold:g}; {shares or 'no shares'}); "
            f"evidence {_evidence_text(self.evidence)}"
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form (camelCase keys)."""
        return {
            "level": self.level,
            "trigger": self.trigger,
            "score": self.score,
            "threshold": self.threshold,
            "evidence": list(self.evidence),
            "scope": self.scope,
            "scopeValue": self.scope_value,
            "contributions": dict(self.contributions),
            "triggeredBy": self.triggered_by,
            "timestamp": self.timestamp,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Escalation:
        """Read back :meth:`to_dict` output; a bad field raises :class:`ImmuneRecordError`."""
        reader = _Reader(data, "escalation")
        return cls(
            level=cast(EscalationLevel, reader.choice("level", LEVELS[1:])),
            trigger=reader.text("trigger"),
            score=reader.number("score"),
            evidence=reader.texts("evidence"),
            scope=cast(ScopeKind, reader.choice("scope", SCOPES)),
            scope_value=reader.optional_text("scopeValue"),
            threshold=reader.number("threshold"),
            contributions=reader.shares("contributions"),
            triggered_by=reader.optional_text("triggeredBy"),
            timestamp=reader.number("timestamp"),
        )


@dataclass(frozen=True)
class Lift:
    """A quarantine (or notice) was ended on purpose, with a reason; the return path is recorded.

    ``lifted`` lists the ``(scope, scope_value)`` of every quarantine it ended.
    """

    reason: str
    timestamp: float
    previous_level: Level
    lifted: tuple[tuple[ScopeKind, str | None], ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.reason, str) or not self.reason.strip():
            raise ImmuneRecordError(
                f"lift: field 'reason' must be a non-empty text, got {self.reason!r}"
            )
        _require_choice("previousLevel", self.previous_level, LEVELS)

    def describe(self) -> str:
        """One line for reports and failure messages."""
        ended = ", ".join(_scope_text(kind, value) for kind, value in self.lifted) or "nothing"
        return f"lift from {self.previous_level} (ended {ended}): {self.reason}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form (camelCase keys)."""
        return {
            "reason": self.reason,
            "timestamp": self.timestamp,
            "previousLevel": self.previous_level,
            "lifted": [{"scope": kind, "scopeValue": value} for kind, value in self.lifted],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Lift:
        """Read back :meth:`to_dict` output; a bad field raises :class:`ImmuneRecordError`."""
        reader = _Reader(data, "lift")
        lifted_raw = reader.items("lifted")
        lifted: list[tuple[ScopeKind, str | None]] = []
        for item in lifted_raw:
            item_reader = _Reader(item, "lift.lifted")
            kind = cast(ScopeKind, item_reader.choice("scope", SCOPES))
            lifted.append((kind, item_reader.optional_text("scopeValue")))
        return cls(
            reason=reader.text("reason"),
            timestamp=reader.number("timestamp"),
            previous_level=cast(Level, reader.choice("previousLevel", LEVELS)),
            lifted=tuple(lifted),
        )


@dataclass(frozen=True)
class Quarantine:
    """An active quarantine: calls it covers are blocked before they run until a lift."""

    scope: ScopeKind
    scope_value: str | None
    escalation: Escalation

    def covers(self, tool: str, category: str) -> bool:
        """Whether a call of ``tool`` in ``category`` falls inside this quarantine."""
        if self.scope == "session":
            return True
        return (category if self.scope == "category" else tool) == self.scope_value

    @property
    def why(self) -> str:
        """Why calls are blocked, for ``[web4-immune] quarantined: <why>``."""
        e = self.escalation
        return (
            f"{_scope_text(self.scope, self.scope_value)} ({e.trigger} brought the score to "
            f"{e.score:g}, quarantine at {e.threshold:g}; evidence "
            f"{_evidence_text(e.evidence)}); lift with a reason to resume"
        )

    @property
    def message(self) -> str:
        """The full block message: ``[web4-immune] quarantined: <why>``."""
        return QUARANTINE_PREFIX + self.why


Entry = CallEvent | Escalation | Lift


def format_history(history: Sequence[Escalation | Lift]) -> str:
    """The ladder's steps with their evidence, one per line (for readable failure messages)."""
    if not history:
        return "no escalation (level observe)"
    return "\n".join(f"{i}. {step.describe()}" for i, step in enumerate(history, start=1))


def _scope_text(kind: str, value: str | None) -> str:
    return "the whole session" if value is None else f"{kind} {value!r}"


def _evidence_text(evidence: Sequence[str]) -> str:
    shown = ", ".join(evidence[:_SHOWN_EVIDENCE])
    more = len(evidence) - _SHOWN_EVIDENCE
    return f"{shown} (+{more} more)" if more > 0 else shown or "(none)"


def _require_choice(field: str, value: object, choices: Sequence[str]) -> None:
    if value not in choices:
        raise ImmuneRecordError(
            f"field {field!r} must be one of {', '.join(choices)}, got {value!r}"
        )


class _Reader:
    """Typed access to one stored dict; every mistake names the kind, field and value."""

    def __init__(self, data: object, kind: str) -> None:
        if not isinstance(data, Mapping):
            raise ImmuneRecordError(f"{kind}: expected a mapping, got {data!r}")
        self._data = data
        self._kind = kind

    def _fail(self, field: str, expected: str, value: object) -> ImmuneRecordError:
        return ImmuneRecordError(f"{self._kind}: field {field!r} must be {expected}, got {value!r}")

    def _get(self, field: str) -> object:
        if field not in self._data:
            raise ImmuneRecordError(f"{self._kind}: field {field!r} is missing")
        return self._data[field]

    def text(self, field: str) -> str:
        value = self._get(field)
        if not isinstance(value, str):
            raise self._fail(field, "a text", value)
        return value

    def optional_text(self, field: str) -> str | None:
        value = self._data.get(field)
        if value is not None and not isinstance(value, str):
            raise self._fail(field, "a text or null", value)
        return value

    def choice(self, field: str, choices: Sequence[str]) -> str:
        value = self._get(field)
        if value not in choices:
            raise self._fail(field, "one of " + ", ".join(choices), value)
        return cast(str, value)

    def flag(self, field: str) -> bool:
        value = self._get(field)
        if not isinstance(value, bool):
            raise self._fail(field, "true or false", value)
        return value

    def number(self, field: str) -> float:
        value = self._get(field)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self._fail(field, "a number", value)
        if not math.isfinite(value):
            raise self._fail(field, "a finite number", value)
        return float(value)

    def items(self, field: str) -> list[object]:
        value = self._data.get(field, [])
        if not isinstance(value, list):
            raise self._fail(field, "a list", value)
        return value

    def texts(self, field: str) -> tuple[str, ...]:
        values = self.items(field)
        if not all(isinstance(v, str) for v in values):
            raise self._fail(field, "a list of texts", values)
        return tuple(cast(list[str], values))

    def shares(self, field: str) -> tuple[tuple[str, float], ...]:
        value = self._data.get(field, {})
        if not isinstance(value, Mapping) or not all(
            isinstance(k, str) and not isinstance(v, bool) and isinstance(v, (int, float))
            for k, v in value.items()
        ):
            raise self._fail(field, "a mapping of trigger names to numbers", value)
        return tuple((k, float(v)) for k, v in value.items())
