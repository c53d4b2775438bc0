"""The ``immune:`` section of a policy file, validated into an :class:`ImmuneConfig`.

Shape (every key optional; a missing section key takes the built-in default, which is the
``safety`` preset's; a ``triggers`` mapping that is present lists *all* active triggers)::

    immune:
      enabled: true
      window: {calls: 50, seconds: 600}          # rolling; either or both
      triggers:
        enforced_deny: 2                          # weight per enforced deny
        dry_run_deny: 1
        warn: 0.1
        credential_access: 1                      # per call with that alert
        memory_write: 1
        repeated_failure: {weight: 2, count: 3}   # same tool + input hash failing 3× in a row
        flows:                                    # an ordered pair of calls inside the window
          - id: exfiltration
            first: {alerts: [credential_access]}
            then: {categories: [network]}
            weight: 10
      thresholds: {notice: 3, quarantine: 10}
      quarantine_scope: session                   # session | category | tool

Any unknown key, bad type or bad value raises :class:`~pytest_harness_audit.errors.PolicyError`
naming the source, the field (``immune.triggers.flows[0].then.categories``) and the value.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any, cast

from pytest_harness_audit.errors import PolicyError
from pytest_harness_audit.immune.alerts import ALERT_NAMES, CREDENTIAL_ACCESS
from pytest_harness_audit.immune.records import SCOPES, STATUSES, CallEvent, ScopeKind

SECTION = "immune"
SIMPLE_TRIGGERS = ("enforced_deny", "dry_run_deny", "warn", "credential_access", "memory_write")
REPEATED_FAILURE = "repeated_failure"
FLOW_PREFIX = "flow:"

_EXFILTRATION_FLOWS: list[dict[str, Any]] = [
    {
        "id": "exfiltration",
        "first": {"alerts": [CREDENTIAL_ACCESS]},
        "then": {"categories": ["network"]},
        "weight": 10,
    },
    {
        "id": "secret-then-send",
        "first": {"alerts": [CREDENTIAL_ACCESS]},
        "then": {"categories": ["message"]},
        "weight": 10,
    },
]

_SAFETY: dict[str, Any] = {
    "enabled": True,
    "window": {"calls": 50, "seconds": 600},
    "triggers": {
        "enforced_deny": 2,
        "dry_run_deny": 1,
        # Small on purpose: 50 warned calls alone reach 5, a notice but never a quarantine.
        "warn": 0.1,
        "credential_access": 1,
        "memory_write": 1,
        "repeated_failure": {"weight": 2, "count": 3},
        "flows": _EXFILTRATION_FLOWS,
    },
    "thresholds": {"notice": 3, "quarantine": 10},
    "quarantine_scope": "session",
}
_STRICT: dict[str, Any] = {
    "enabled": True,
    "window": {"calls": 100, "seconds": 1800},
    "triggers": {
        "enforced_deny": 2,
        "dry_run_deny": 1,
        "warn": 0.25,
        "credential_access": 2,
        "memory_write": 2,
        "repeated_failure": {"weight": 2, "count": 3},
        "flows": _EXFILTRATION_FLOWS,
    },
    "thresholds": {"notice": 2, "quarantine": 6},
    "quarantine_scope": "session",
}

#: The ``immune:`` section each preset ships with (read-only: copy before changing).
DEFAULT_IMMUNE: Mapping[str, Mapping[str, Any]] = {
    "permissive": {"enabled": False},
    "safety": _SAFETY,
    "strict": _STRICT,
    "audit-only": {"enabled": False},
}


@dataclass(frozen=True)
class Window:
    """The rolling window: the last ``calls`` calls and/or the last ``seconds`` seconds.

    ``None`` means unbounded on that axis; evidence must satisfy both bounds to count.
    """

    calls: int | None
    seconds: float | None


@dataclass(frozen=True)
class CallPattern:
    """One side of a flow: AND of the present criteria, OR inside each list; empty = any call."""

    tools: tuple[str, ...] | None = None
    categories: tuple[str, ...] | None = None
    alerts: tuple[str, ...] | None = None
    statuses: tuple[str, ...] | None = None

    def matches(self, event: CallEvent) -> bool:
        """Whether ``event`` fits this pattern."""
        return (
            (self.tools is None or event.tool in self.tools)
            and (self.categories is None or any(c in self.categories for c in event.categories))
            and (self.alerts is None or any(a in self.alerts for a in event.alerts))
            and (self.statuses is None or event.status in self.statuses)
        )

    def to_dict(self) -> dict[str, list[str]]:
        """The present criteria, as in a policy file."""
        fields = {
            "tools": self.tools,
            "categories": self.categories,
            "alerts": self.alerts,
            "statuses": self.statuses,
        }
        return {key: list(value) for key, value in fields.items() if value is not None}


@dataclass(frozen=True)
class FlowTrigger:
    """A call matching ``first`` followed, inside the window, by one matching ``then``."""

    id: str
    first: CallPattern
    then: CallPattern
    weight: float

    @property
    def name(self) -> str:
        """Trigger name on escalations: ``flow:<id>``."""
        return FLOW_PREFIX + self.id


@dataclass(frozen=True)
class RepeatedFailure:
    """The same tool with the same input hash failing ``count`` times in a row.

    "In a row" counts that call's own attempts: other calls in between do not break the streak,
    a success of the same call does. Each failure from the ``count``-th on adds ``weight``.
    """

    weight: float
    count: int


@dataclass(frozen=True)
class Triggers:
    """Weights of the triggers; a weight of 0 (or a missing trigger) is off."""

    enforced_deny: float = 0.0
    dry_run_deny: float = 0.0
    warn: float = 0.0
    credential_access: float = 0.0
    memory_write: float = 0.0
    repeated_failure: RepeatedFailure | None = None
    flows: tuple[FlowTrigger, ...] = ()

    def names(self) -> tuple[str, ...]:
        """Every trigger name in configuration order (the tie-break order of escalations)."""
        return (*SIMPLE_TRIGGERS, REPEATED_FAILURE, *(flow.name for flow in self.flows))


@dataclass(frozen=True)
class Thresholds:
    """Scores at which the ladder reaches ``notice`` and ``quarantine``."""

    notice: float
    quarantine: float


@dataclass(frozen=True)
class ImmuneConfig:
    """A validated ``immune:`` section (see the module docstring for the file shape)."""

    enabled: bool
    window: Window
    triggers: Triggers
    thresholds: Thresholds
    quarantine_scope: ScopeKind

    @classmethod
    def from_dict(
        cls,
        data: object,
        *,
        source: str | None = None,
        line: int | None = None,
        known_categories: Collection[str] | None = None,
    ) -> ImmuneConfig:
        """Validate an ``immune:`` mapping.

        ``source`` (file name) and ``line`` go into errors; with ``known_categories`` a flow
        naming any other category is an error (catches typos such as ``netwrok``).
        """
        return _Parser(source, line, known_categories).config(data)

    @classmethod
    def for_preset(cls, name: str) -> ImmuneConfig:
        """The configuration a preset ships with (:data:`DEFAULT_IMMUNE`)."""
        if name not in DEFAULT_IMMUNE:
            raise PolicyError(
                f"unknown preset {name!r}; available: {', '.join(DEFAULT_IMMUNE)}",
                field=SECTION,
            )
        return cls.from_dict(DEFAULT_IMMUNE[name], source=f"preset {name}")

    @classmethod
    def disabled(cls) -> ImmuneConfig:
        """A configuration that never escalates."""
        return cls.from_dict({"enabled": False})

    def to_dict(self) -> dict[str, Any]:
        """The full configuration as a policy-file mapping; ``from_dict`` reads it back equal."""
        triggers: dict[str, Any] = {name: getattr(self.triggers, name) for name in SIMPLE_TRIGGERS}
        rf = self.triggers.repeated_failure
        if rf is not None:
            triggers[REPEATED_FAILURE] = {"weight": rf.weight, "count": rf.count}
        triggers["flows"] = [
            {"id": f.id, "first": f.first.to_dict(), "then": f.then.to_dict(), "weight": f.weight}
            for f in self.triggers.flows
        ]
        window: dict[str, Any] = {}
        if self.window.calls is not None:
            window["calls"] = self.window.calls
        if self.window.seconds is not None:
            window["seconds"] = self.window.seconds
        return {
            "enabled": self.enabled,
            "window": window,
            "triggers": triggers,
            "thresholds": {
                "notice": self.thresholds.notice,
                "quarantine": self.thresholds.quarantine,
            },
            "quarantine_scope": self.quarantine_scope,
        }


_TOP_KEYS = ("enabled", "window", "triggers", "thresholds", "quarantine_scope")
_WINDOW_KEYS = ("calls", "seconds")
_TRIGGER_KEYS = (*SIMPLE_TRIGGERS, REPEATED_FAILURE, "flows")
_REPEATED_KEYS = ("weight", "count")
_FLOW_KEYS = ("id", "first", "then", "weight")
_PATTERN_KEYS = ("tools", "categories", "alerts", "statuses")
_THRESHOLD_KEYS = ("notice", "quarantine")


class _Parser:
    """Validation of one section; every error names source, line and the dotted field path."""

    def __init__(
        self, source: str | None, line: int | None, known_categories: Collection[str] | None
    ) -> None:
        self._source = source
        self._line = line
        self._known_categories = known_categories

    def _error(self, field: str, message: str) -> PolicyError:
        return PolicyError(message, source=self._source, line=self._line, field=field)

    def config(self, data: object) -> ImmuneConfig:
        section = self._mapping(SECTION, data, _TOP_KEYS)
        defaults = DEFAULT_IMMUNE["safety"]
        enabled = section.get("enabled", True)
        if not isinstance(enabled, bool):
            raise self._error(f"{SECTION}.enabled", f"must be true or false, got {enabled!r}")
        window = self._window(section.get("window", defaults["window"]))
        triggers = self._triggers(section.get("triggers", defaults["triggers"]))
        thresholds = self._thresholds(section.get("thresholds", defaults["thresholds"]))
        scope = section.get("quarantine_scope", defaults["quarantine_scope"])
        if scope not in SCOPES:
            raise self._error(
                f"{SECTION}.quarantine_scope",
                f"must be one of {', '.join(SCOPES)}, got {scope!r}",
            )
        return ImmuneConfig(enabled, window, triggers, thresholds, cast(ScopeKind, scope))

    def _mapping(self, field: str, value: object, keys: tuple[str, ...]) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            raise self._error(field, f"must be a mapping, got {value!r}")
        for key in value:
            if key not in keys:
                raise self._error(
                    f"{field}.{key}", f"unknown key {key!r}; allowed: {', '.join(keys)}"
                )
        return cast(Mapping[str, Any], value)

    def _number(self, field: str, value: object, *, positive: bool) -> float:
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
        ):
            raise self._error(field, f"must be a number, got {value!r}")
        if value < 0 or (positive and value == 0):
            bound = "> 0" if positive else ">= 0"
            raise self._error(field, f"must be {bound}, got {value!r}")
        return float(value)

    def _count(self, field: str, value: object) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise self._error(field, f"must be a whole number >= 1, got {value!r}")
        return value

    def _window(self, value: object) -> Window:
        field = f"{SECTION}.window"
        window = self._mapping(field, value, _WINDOW_KEYS)
        if not window:
            raise self._error(field, "must set calls and/or seconds, got an empty mapping")
        calls = window.get("calls")
        seconds = window.get("seconds")
        return Window(
            calls=None if calls is None else self._count(f"{field}.calls", calls),
            seconds=None
            if seconds is None
            else self._number(f"{field}.seconds", seconds, positive=True),
        )

    def _triggers(self, value: object) -> Triggers:
        field = f"{SECTION}.triggers"
        triggers = self._mapping(field, value, _TRIGGER_KEYS)
        weights = {
            name: self._number(f"{field}.{name}", triggers[name], positive=False)
            for name in SIMPLE_TRIGGERS
            if name in triggers
        }
        repeated = None
        if REPEATED_FAILURE in triggers:
            rf_field = f"{field}.{REPEATED_FAILURE}"
            rf = self._mapping(rf_field, triggers[REPEATED_FAILURE], _REPEATED_KEYS)
            for key in _REPEATED_KEYS:
                if key not in rf:
                    raise self._error(f"{rf_field}.{key}", "is required")
            repeated = RepeatedFailure(
                weight=self._number(f"{rf_field}.weight", rf["weight"], positive=False),
                count=self._count(f"{rf_field}.count", rf["count"]),
            )
        flows_raw = triggers.get("flows", [])
        if not isinstance(flows_raw, list):
            raise self._error(f"{field}.flows", f"must be a list of flows, got {flows_raw!r}")
        flows = tuple(self._flow(f"{field}.flows[{i}]", raw) for i, raw in enumerate(flows_raw))
        seen: set[str] = set()
        for i, flow in enumerate(flows):
            if flow.id in seen:
                raise self._error(f"{field}.flows[{i}].id", f"duplicate flow id {flow.id!r}")
            seen.add(flow.id)
        return Triggers(**weights, repeated_failure=repeated, flows=flows)

    def _flow(self, field: str, value: object) -> FlowTrigger:
        flow = self._mapping(field, value, _FLOW_KEYS)
        for key in _FLOW_KEYS:
            if key not in flow:
                raise self._error(f"{field}.{key}", "is required")
        flow_id = flow["id"]
        if not isinstance(flow_id, str) or not flow_id.strip():
            raise self._error(f"{field}.id", f"must be a non-empty text, got {flow_id!r}")
        return FlowTrigger(
            id=flow_id,
            first=self._pattern(f"{field}.first", flow["first"]),
            then=self._pattern(f"{field}.then", flow["then"]),
            weight=self._number(f"{field}.weight", flow["weight"], positive=False),
        )

    def _pattern(self, field: str, value: object) -> CallPattern:
        pattern = self._mapping(field, value, _PATTERN_KEYS)
        allowed: dict[str, Collection[str] | None] = {
            "tools": None,
            "categories": self._known_categories,
            "alerts": ALERT_NAMES,
            "statuses": STATUSES,
        }
        lists = {
            key: self._names(f"{field}.{key}", pattern[key], allowed[key])
            for key in _PATTERN_KEYS
            if key in pattern
        }
        return CallPattern(**lists)

    def _names(self, field: str, value: object, allowed: Collection[str] | None) -> tuple[str, ...]:
        if (
            not isinstance(value, list)
            or not value
            or not all(isinstance(v, str) and v for v in value)
        ):
            raise self._error(field, f"must be a non-empty list of names, got {value!r}")
        if allowed is not None:
            for name in value:
                if name not in allowed:
                    raise self._error(
                        field, f"unknown name {name!r}; allowed: {', '.join(sorted(allowed))}"
                    )
        return tuple(value)

    def _thresholds(self, value: object) -> Thresholds:
        field = f"{SECTION}.thresholds"
        thresholds = self._mapping(field, value, _THRESHOLD_KEYS)
        for key in _THRESHOLD_KEYS:
            if key not in thresholds:
                raise self._error(f"{field}.{key}", "is required")
        notice = self._number(f"{field}.notice", thresholds["notice"], positive=True)
        quarantine = self._number(f"{field}.quarantine", thresholds["quarantine"], positive=True)
        if quarantine < notice:
            raise self._error(
                f"{field}.quarantine",
                f"must be >= notice ({notice:g}), got {thresholds['quarantine']!r}",
            )
        return Thresholds(notice=notice, quarantine=quarantine)


def default_immune(preset: str) -> dict[str, Any]:
    """A private deep copy of :data:`DEFAULT_IMMUNE` ``[preset]``, safe to change."""
    if preset not in DEFAULT_IMMUNE:
        raise PolicyError(
            f"unknown preset {preset!r}; available: {', '.join(DEFAULT_IMMUNE)}", field=SECTION
        )
    return copy.deepcopy(dict(DEFAULT_IMMUNE[preset]))
