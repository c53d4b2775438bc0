"""Immune escalation: a graded, liftable response to repeated misbehaviour (DESIGN §4).

* :mod:`.config` — the ``immune:`` policy section (:class:`ImmuneConfig`, :data:`DEFAULT_IMMUNE`);
* :mod:`.alerts` — credential and agent-memory alerts on a call's targets;
* :mod:`.records` — call events, escalations, lifts and quarantines, and their stored form;
* :mod:`.triggers` — the rolling evidence window and the trigger weights;
* :mod:`.ladder` — :class:`ImmuneLadder`: check before a call, observe after, lift, replay.
"""

from __future__ import annotations

from pytest_harness_audit.immune.alerts import (
    ALERT_NAMES,
    CREDENTIAL_ACCESS,
    MEMORY_WRITE,
    alerts_for,
    credential_alert,
    memory_write_alert,
)
from pytest_harness_audit.immune.config import (
    DEFAULT_IMMUNE,
    CallPattern,
    FlowTrigger,
    ImmuneConfig,
    RepeatedFailure,
    Thresholds,
    Triggers,
    Window,
    default_immune,
)
from pytest_harness_audit.immune.ladder import ImmuneLadder, ImmuneStatus
from pytest_harness_audit.immune.records import (
    LEVELS,
    QUARANTINE_PREFIX,
    CallEvent,
    Entry,
    Escalation,
    ImmuneRecordError,
    Level,
    Lift,
    Quarantine,
    format_history,
    level_rank,
)

__all__ = [
    "ALERT_NAMES",
    "CREDENTIAL_ACCESS",
    "DEFAULT_IMMUNE",
    "LEVELS",
    "MEMORY_WRITE",
    "QUARANTINE_PREFIX",
    "CallEvent",
    "CallPattern",
    "Entry",
    "Escalation",
    "FlowTrigger",
    "ImmuneConfig",
    "ImmuneLadder",
    "ImmuneRecordError",
    "ImmuneStatus",
    "Level",
    "Lift",
    "Quarantine",
    "RepeatedFailure",
    "Thresholds",
    "Triggers",
    "Window",
    "alerts_for",
    "credential_alert",
    "default_immune",
    "format_history",
    "level_rank",
    "memory_write_alert",
]
