"""The immune ladder ``observe → notice → quarantine``, with a recorded return path (lift).

A policy judges one call; the ladder judges the pattern. The gate asks :meth:`ImmuneLadder.check`
before a call runs and blocks it when a quarantine covers it; after the call is recorded it hands
the call to :meth:`ImmuneLadder.observe`, which returns the escalations to append to the chain.
Levels only go up; only :meth:`ImmuneLadder.lift`, with a reason, brings the ladder back to
``observe``, and it forgets the old evidence so that evidence cannot re-quarantine at once.

The chain is the single source of truth: :meth:`ImmuneLadder.replay` rebuilds the same state from
the recorded calls, escalations and lifts, in chain order, in any process. That holds when every
escalation :meth:`~ImmuneLadder.observe` returns is recorded right after the call that caused it,
and every :class:`~pytest_harness_audit.immune.records.Lift` is recorded when it happens.

Scopes: with ``session`` a quarantine blocks every call; with ``category`` (``tool``) it blocks
the category (tool) of the call that tipped the score over the threshold. While the score stays
at or above the threshold, each further offending call of another category (tool) quarantines
that one too. Calls refused because a quarantine covers them are not evidence: they would only
inflate the score, and a lift clears the window anyway.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from pytest_harness_audit.errors import UsageError
from pytest_harness_audit.immune.config import ImmuneConfig
from pytest_harness_audit.immune.records import (
    CallEvent,
    Entry,
    Escalation,
    EscalationLevel,
    ImmuneRecordError,
    Level,
    Lift,
    Quarantine,
    level_rank,
)
from pytest_harness_audit.immune.triggers import EvidenceWindow, WindowEntry, from_units, to_units
from pytest_harness_audit.wording import plural

Clock = Callable[[], float]


@dataclass(frozen=True)
class ImmuneStatus:
    """A snapshot for ``harness-audit immune status``: level, score and what it rests on."""

    level: Level
    score: float
    notice_at: float
    quarantine_at: float
    evidence: tuple[str, ...]
    contributions: tuple[tuple[str, float], ...]
    quarantines: tuple[Quarantine, ...]
    window_calls: int

    def describe(self) -> str:
        """Human-readable lines."""
        shares = ", ".join(f"{name} {weight:g}" for name, weight in self.contributions)
        lines = [
            f"level: {self.level}",
            f"score: {self.score:g} (notice at {self.notice_at:g}, "
            f"quarantine at {self.quarantine_at:g}; "
            f"{plural(self.window_calls, 'call')} in the window)",
            f"triggers: {shares or '(none)'}",
            f"evidence: {', '.join(self.evidence) or '(none)'}",
        ]
        lines.extend(f"quarantined: {q.why}" for q in self.quarantines)
        return "\n".join(lines)


class ImmuneLadder:
    """The escalation state of one audited session."""

    def __init__(self, config: ImmuneConfig, *, clock: Clock = time.time) -> None:
        self._config = config
        self._clock = clock
        self._window = EvidenceWindow(config)
        self._level: Level = "observe"
        self._quarantines: list[Quarantine] = []
        self._history: list[Escalation | Lift] = []

    @classmethod
    def replay(
        cls, config: ImmuneConfig, entries: Iterable[Entry], *, clock: Clock = time.time
    ) -> ImmuneLadder:
        """Rebuild the ladder from recorded calls, escalations and lifts, in chain order.

        Recorded escalations and lifts are taken as facts (not recomputed); calls rebuild the
        evidence window, so the replayed ladder continues exactly like the live one.
        """
        ladder = cls(config, clock=clock)
        for entry in entries:
            ladder.apply(entry)
        return ladder

    @property
    def config(self) -> ImmuneConfig:
        """The configuration this ladder runs on."""
        return self._config

    @property
    def level(self) -> Level:
        """The current rung: ``observe``, ``notice`` or ``quarantine``."""
        return self._level

    @property
    def score(self) -> float:
        """The current score (evidence that left the time window by now no longer counts)."""
        return self._window.score_at(self._clock())

    @property
    def evidence(self) -> tuple[str, ...]:
        """Record ids of the calls behind the score, in call order."""
        return self._window.evidence()

    @property
    def history(self) -> list[Escalation | Lift]:
        """Every escalation and lift so far, in order."""
        return list(self._history)

    @property
    def escalations(self) -> tuple[Escalation, ...]:
        """The escalations in :attr:`history`."""
        return tuple(step for step in self._history if isinstance(step, Escalation))

    @property
    def quarantines(self) -> tuple[Quarantine, ...]:
        """The quarantines in force, oldest first."""
        return tuple(self._quarantines)

    def check(self, tool: str, category: str) -> Quarantine | None:
        """Before a call runs: the quarantine that covers it, or ``None`` to let it through."""
        return next((q for q in self._quarantines if q.covers(tool, category)), None)

    def observe(self, event: CallEvent) -> list[Escalation]:
        """After a call is recorded: take it as evidence and return the new escalations.

        Returns ``[]``, ``[notice]``, ``[quarantine]`` or ``[notice, quarantine]`` (a jump
        straight over both thresholds). Record each, in order, right after the call.
        """
        entry = self._ingest(event)
        if entry is None or not entry.hits:
            return []
        units = self._window.units
        thresholds = self._config.thresholds
        scope = self._config.quarantine_scope
        value = {"session": None, "category": event.category, "tool": event.tool}[scope]
        steps: list[Escalation] = []
        if self._level == "observe" and units >= to_units(thresholds.notice):
            steps.append(self._escalation("notice", entry, thresholds.notice, value))
            self._apply_escalation(steps[-1])
        if units >= to_units(thresholds.quarantine) and not any(
            q.scope == scope and q.scope_value == value for q in self._quarantines
        ):
            steps.append(self._escalation("quarantine", entry, thresholds.quarantine, value))
            self._apply_escalation(steps[-1])
        return steps

    def lift(self, reason: str) -> Lift:
        """End every quarantine and go back to ``observe``, forgetting the old evidence.

        ``reason`` is required (nothing lifts silently); record the returned :class:`Lift`.
        """
        if not isinstance(reason, str) or not reason.strip():
            raise UsageError(f"a lift needs a non-empty reason, got {reason!r}")
        lift = Lift(
            reason=reason.strip(),
            timestamp=self._clock(),
            previous_level=self._level,
            lifted=tuple((q.scope, q.scope_value) for q in self._quarantines),
        )
        self._apply_lift(lift)
        return lift

    def apply(self, entry: Entry) -> None:
        """Replay one recorded entry (a call, an escalation or a lift) onto this ladder."""
        if isinstance(entry, CallEvent):
            self._ingest(entry)
        elif isinstance(entry, Escalation):
            self._apply_escalation(entry)
        elif isinstance(entry, Lift):
            self._apply_lift(entry)
        else:
            raise ImmuneRecordError(
                f"cannot replay {entry!r}: expected a call event, an escalation or a lift"
            )

    def status(self) -> ImmuneStatus:
        """A snapshot of level, score (now), evidence and quarantines."""
        return ImmuneStatus(
            level=self._level,
            score=self.score,
            notice_at=self._config.thresholds.notice,
            quarantine_at=self._config.thresholds.quarantine,
            evidence=self.evidence,
            contributions=self._window.contributions(),
            quarantines=self.quarantines,
            window_calls=len(self._window.entries),
        )

    def _ingest(self, event: CallEvent) -> WindowEntry | None:
        if not self._config.enabled:
            return None
        if event.status == "blocked" and self.check(event.tool, event.category) is not None:
            return None
        return self._window.add(event)

    def _escalation(
        self, level: EscalationLevel, entry: WindowEntry, threshold: float, value: str | None
    ) -> Escalation:
        contributions = self._window.contributions(prefer={hit.name for hit in entry.hits})
        return Escalation(
            level=level,
            trigger=contributions[0][0],
            score=from_units(self._window.units),
            evidence=self._window.evidence(),
            scope=self._config.quarantine_scope,
            scope_value=value,
            threshold=threshold,
            contributions=contributions,
            triggered_by=entry.event.record_id,
            timestamp=entry.time,
        )

    def _apply_escalation(self, escalation: Escalation) -> None:
        self._history.append(escalation)
        if level_rank(escalation.level) > level_rank(self._level):
            self._level = escalation.level
        if escalation.level == "quarantine" and not any(
            q.scope == escalation.scope and q.scope_value == escalation.scope_value
            for q in self._quarantines
        ):
            self._quarantines.append(
                Quarantine(escalation.scope, escalation.scope_value, escalation)
            )

    def _apply_lift(self, lift: Lift) -> None:
        self._history.append(lift)
        self._quarantines.clear()
        self._level = "observe"
        self._window.clear()
