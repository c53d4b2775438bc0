"""The rolling evidence window: which calls count against the agent, and how much.

Every call added to the window is checked against the triggers once, when it arrives; the
weights it earns (its *hits*) count towards the score for as long as the call stays inside the
window (the last ``calls`` calls and the last ``seconds`` seconds). Scores are kept in integer
micro-points, so adding and expiring evidence never accumulates rounding error and a replay of
the same calls gives bit-for-bit the same score.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Collection
from dataclasses import dataclass
from itertools import islice

from pytest_harness_audit.immune.alerts import CREDENTIAL_ACCESS, MEMORY_WRITE
from pytest_harness_audit.immune.config import REPEATED_FAILURE, ImmuneConfig
from pytest_harness_audit.immune.records import CallEvent

UNITS_PER_POINT = 1_000_000


def to_units(weight: float) -> int:
    """A weight or threshold in integer micro-points."""
    return round(weight * UNITS_PER_POINT)


def from_units(units: int) -> float:
    """Micro-points back to points."""
    return units / UNITS_PER_POINT


@dataclass(frozen=True)
class TriggerHit:
    """One trigger firing at one call: its name, weight and the calls that make the evidence."""

    name: str
    units: int
    evidence: tuple[str, ...]
    evidence_order: tuple[int, ...]

    @property
    def weight(self) -> float:
        """The weight this hit adds to the score."""
        return from_units(self.units)


@dataclass(frozen=True)
class WindowEntry:
    """A call inside the window with the hits it earned (``time`` never runs backwards)."""

    order: int
    event: CallEvent
    time: float
    hits: tuple[TriggerHit, ...]

    @property
    def units(self) -> int:
        """Everything this call adds to the score, in micro-points."""
        return sum(hit.units for hit in self.hits)


_FailureKey = tuple[str, str]
_Ref = tuple[int, str]  # (arrival order, record id)


class EvidenceWindow:
    """The calls that currently count, with their trigger hits and the running score."""

    def __init__(self, config: ImmuneConfig) -> None:
        self._config = config
        self._simple = [
            (name, to_units(getattr(config.triggers, name)))
            for name in ("enforced_deny", "dry_run_deny", "warn", CREDENTIAL_ACCESS, MEMORY_WRITE)
        ]
        self._entries: deque[WindowEntry] = deque()
        self._units = 0
        self._now = float("-inf")
        self._next_order = 0
        # Per flow: calls in the window matching its `first` pattern, oldest first.
        self._firsts: list[deque[_Ref]] = [deque() for _ in config.triggers.flows]
        # Per (tool, input hash): the current run of failures inside the window.
        self._streaks: dict[_FailureKey, deque[_Ref]] = {}

    @property
    def units(self) -> int:
        """The score at the time of the latest call, in micro-points."""
        return self._units

    @property
    def score(self) -> float:
        """The score at the time of the latest call."""
        return from_units(self._units)

    @property
    def entries(self) -> tuple[WindowEntry, ...]:
        """The calls inside the window, oldest first."""
        return tuple(self._entries)

    def score_at(self, now: float) -> float:
        """The score at ``now``: evidence older than the window's seconds no longer counts."""
        seconds = self._config.window.seconds
        if seconds is None:
            return self.score
        return from_units(sum(e.units for e in self._entries if now - e.time < seconds))

    def add(self, event: CallEvent) -> WindowEntry:
        """Take ``event`` into the window, expire what fell out, and return its entry."""
        self._now = max(self._now, event.timestamp)
        self._expire(room_for_one=True)
        order = self._next_order
        self._next_order += 1
        ref = (order, event.record_id)
        hits = [*self._simple_hits(event, ref), *self._failure_hits(event, ref)]
        for flow, firsts in zip(self._config.triggers.flows, self._firsts, strict=True):
            units = to_units(flow.weight)
            if units and firsts and flow.then.matches(event):
                first = firsts[-1]
                hits.append(_hit(flow.name, units, (first, ref)))
            if units and flow.first.matches(event):
                firsts.append(ref)
        entry = WindowEntry(order, event, self._now, tuple(hits))
        self._entries.append(entry)
        self._units += entry.units
        return entry

    def clear(self) -> None:
        """Forget all evidence (after a lift); arrival order and time keep running."""
        self._entries.clear()
        self._units = 0
        for firsts in self._firsts:
            firsts.clear()
        self._streaks.clear()

    def evidence(self) -> tuple[str, ...]:
        """Record ids behind the current score, in call order, each once."""
        refs = {
            (order, record_id)
            for entry in self._entries
            for hit in entry.hits
            for order, record_id in zip(hit.evidence_order, hit.evidence, strict=True)
        }
        return tuple(dict.fromkeys(record_id for _, record_id in sorted(refs)))

    def contributions(self, prefer: Collection[str] = ()) -> tuple[tuple[str, float], ...]:
        """Each trigger's share of the score, largest first.

        Ties go to a name in ``prefer`` (the hits of the call that tipped the score), then to
        configuration order.
        """
        shares: dict[str, int] = {}
        for entry in self._entries:
            for hit in entry.hits:
                shares[hit.name] = shares.get(hit.name, 0) + hit.units
        names = self._config.triggers.names()
        ranked = sorted(
            shares.items(),
            key=lambda item: (-item[1], item[0] not in prefer, names.index(item[0])),
        )
        return tuple((name, from_units(units)) for name, units in ranked if units > 0)

    def _simple_hits(self, event: CallEvent, ref: _Ref) -> list[TriggerHit]:
        fired = {
            "enforced_deny": event.decision == "deny" and event.enforced,
            "dry_run_deny": event.decision == "deny" and not event.enforced,
            "warn": event.decision == "warn",
            CREDENTIAL_ACCESS: CREDENTIAL_ACCESS in event.alerts,
            MEMORY_WRITE: MEMORY_WRITE in event.alerts,
        }
        return [_hit(name, units, (ref,)) for name, units in self._simple if units and fired[name]]

    def _failure_hits(self, event: CallEvent, ref: _Ref) -> list[TriggerHit]:
        rule = self._config.triggers.repeated_failure
        if rule is None or not to_units(rule.weight):
            return []
        key = (event.tool, event.input_hash)
        if not event.failed:
            self._streaks.pop(key, None)
            return []
        streak = self._streaks.setdefault(key, deque())
        streak.append(ref)
        if len(streak) < rule.count:
            return []
        latest = tuple(islice(reversed(streak), rule.count))[::-1]
        return [_hit(REPEATED_FAILURE, to_units(rule.weight), latest)]

    def _expire(self, *, room_for_one: bool) -> None:
        calls = self._config.window.calls
        seconds = self._config.window.seconds
        keep = None if calls is None else calls - 1 if room_for_one else calls
        while self._entries and (
            (keep is not None and len(self._entries) > keep)
            or (seconds is not None and self._now - self._entries[0].time >= seconds)
        ):
            self._forget(self._entries.popleft())

    def _forget(self, entry: WindowEntry) -> None:
        self._units -= entry.units
        for firsts in self._firsts:
            if firsts and firsts[0][0] == entry.order:
                firsts.popleft()
        key = (entry.event.tool, entry.event.input_hash)
        streak = self._streaks.get(key)
        if streak and streak[0][0] == entry.order:
            streak.popleft()
            if not streak:
                del self._streaks[key]


def _hit(name: str, units: int, refs: tuple[_Ref, ...]) -> TriggerHit:
    return TriggerHit(
        name=name,
        units=units,
        evidence=tuple(record_id for _, record_id in refs),
        evidence_order=tuple(order for order, _ in refs),
    )
