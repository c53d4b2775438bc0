"""The immune score over a session, replayed from its chain, and the geometry of its plot.

The ladder is rebuilt record by record (:meth:`ImmuneLadder.apply`), with its clock set to each
record's own time, so every point is the score the live ladder saw right after that call, not
the score as of now. A lift clears the window: the score drops to zero there.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pytest_harness_audit.immune import Escalation, ImmuneConfig, ImmuneLadder, Lift

#: The plot's drawing box (SVG user units); the SVG scales to its container.
WIDTH = 720
HEIGHT = 240
_LEFT, _RIGHT, _TOP, _BOTTOM = 44, 16, 16, 32


@dataclass(frozen=True)
class ScorePoint:
    """The score right after the record at ``position``; ``x``/``y`` place it in the plot."""

    position: int
    score: float
    level: str
    x: float
    y: float


@dataclass(frozen=True)
class Marker:
    """A vertical mark at an escalation or a lift."""

    position: int
    kind: str
    label: str
    x: float


@dataclass(frozen=True)
class Threshold:
    """A horizontal line at a threshold (notice, quarantine)."""

    name: str
    value: float
    y: float


@dataclass(frozen=True)
class ScoreSeries:
    """Points, thresholds and markers of one session's plot."""

    points: tuple[ScorePoint, ...]
    thresholds: tuple[Threshold, ...]
    markers: tuple[Marker, ...]
    maximum: float
    y_ticks: tuple[tuple[float, float], ...]
    x_ticks: tuple[tuple[int, float], ...]

    width: int = WIDTH
    height: int = HEIGHT
    left: int = _LEFT
    right_edge: int = WIDTH - _RIGHT
    top: int = _TOP
    baseline: int = HEIGHT - _BOTTOM

    @property
    def polyline(self) -> str:
        """The ``points`` attribute of the score line."""
        return " ".join(f"{p.x:.1f},{p.y:.1f}" for p in self.points)

    @property
    def peak(self) -> float:
        """The highest score reached."""
        return max((p.score for p in self.points), default=0.0)

    def describe(self) -> str:
        """One sentence for screen readers."""
        names = ", ".join(f"{t.name} at {t.value:g}" for t in self.thresholds)
        return (
            f"Immune score over {len(self.points)} records, peaking at {self.peak:g} "
            f"(thresholds: {names})."
        )


def score_series(config: ImmuneConfig, records: Iterable[Mapping[str, Any]]) -> ScoreSeries:
    """Replay the ladder over ``records`` (chain order) and lay out the plot."""
    from pytest_harness_audit.gate.follower import immune_entry

    now = [0.0]
    ladder = ImmuneLadder(config, clock=lambda: now[0])
    raw_points: list[tuple[int, float, str]] = []
    raw_markers: list[tuple[int, str, str]] = []
    for record in records:
        entry = immune_entry(record)
        if entry is None:
            continue
        position = int(record.get("provenance", {}).get("actionIndex", 0))
        if isinstance(entry, Escalation):
            ladder.apply(entry)
            raw_markers.append((position, entry.level, f"{entry.level} ({entry.trigger})"))
            continue
        now[0] = entry.timestamp
        ladder.apply(entry)
        if isinstance(entry, Lift):
            raw_markers.append((position, "lift", "lift"))
        raw_points.append((position, ladder.score, ladder.level))
    notice, quarantine = config.thresholds.notice, config.thresholds.quarantine
    peak = max((score for _, score, _ in raw_points), default=0.0)
    maximum = max(peak, quarantine, notice, 1.0) * 1.1
    last = max([p for p, _, _ in raw_points] + [p for p, _, _ in raw_markers] + [1])

    def x_of(position: int) -> float:
        return _LEFT + (WIDTH - _LEFT - _RIGHT) * position / last

    def y_of(score: float) -> float:
        return HEIGHT - _BOTTOM - (HEIGHT - _TOP - _BOTTOM) * score / maximum

    step = max(1, round(last / 10))
    return ScoreSeries(
        points=tuple(
            ScorePoint(pos, score, level, x_of(pos), y_of(score))
            for pos, score, level in raw_points
        ),
        thresholds=(
            Threshold("notice", notice, y_of(notice)),
            Threshold("quarantine", quarantine, y_of(quarantine)),
        ),
        markers=tuple(Marker(pos, kind, label, x_of(pos)) for pos, kind, label in raw_markers),
        maximum=maximum,
        y_ticks=tuple((v, y_of(v)) for v in _ticks(maximum)),
        x_ticks=tuple((p, x_of(p)) for p in range(0, last + 1, step)),
    )


def _ticks(maximum: float) -> list[float]:
    """Round tick values from 0 up to ``maximum`` (about five)."""
    raw = maximum / 5
    magnitude = 10 ** len(str(int(raw))) / 10 if raw >= 1 else 1.0
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)
    values: list[float] = []
    value = 0.0
    while value <= maximum:
        values.append(value)
        value += step
    return values
