"""Sliding-window counters for ``match.rateLimit`` (the session owns one).

Several processes may gate calls into one session, so the counter of each is fed from the
chain too: a decision's hits are kept (:class:`HitLog`), written into the call's record as
``rateHits``, and other gates add them at the record's time (:meth:`SlidingWindowCounter.add`).
A decision made before, in another process, is replayed with :class:`ReplayedHits`.
"""

from __future__ import annotations

import bisect
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any


class SlidingWindowCounter:
    """Counts matching calls per rule inside a sliding window; the clock is injectable.

    ``clock`` returns seconds (``time.monotonic`` by default). Each key's hits stay ordered by
    time, whichever way they arrive (live through :meth:`hit`, replayed through :meth:`add`).
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._hits: dict[str, deque[float]] = {}

    def hit(self, key: str, window_ms: float) -> int:
        """Record one matching call for ``key``; return how many earlier ones are in the window.

        A timestamp is inside the window when it is strictly newer than ``now - window``.
        """
        now = self._clock() * 1000.0
        hits = self._hits.get(key)
        if hits is None:
            hits = self._hits[key] = deque()
        cutoff = now - window_ms
        while hits and hits[0] <= cutoff:
            hits.popleft()
        earlier = len(hits)
        _insert_ordered(hits, now)
        return earlier

    def add(self, key: str, at: float) -> None:
        """Count a matching call for ``key`` made elsewhere at ``at`` (seconds, same clock)."""
        hits = self._hits.get(key)
        if hits is None:
            hits = self._hits[key] = deque()
        _insert_ordered(hits, at * 1000.0)


def _insert_ordered(hits: deque[float], stamp: float) -> None:
    if not hits or hits[-1] <= stamp:
        hits.append(stamp)
    else:  # an older hit learnt late (another process's record): keep the deque sorted
        bisect.insort(hits, stamp)


@dataclass(frozen=True)
class RateHits:
    """The rate-limited rules one decision counted, in evaluation order.

    ``earlier[i]`` is what the counter answered for ``rule_ids[i]`` (matching calls already in
    the window); ``at`` is the gate clock (seconds) when the decision was made.
    """

    rule_ids: tuple[str, ...]
    earlier: tuple[int, ...]
    at: float

    def to_json(self) -> dict[str, Any]:
        """A JSON-able form (for the hook door's pending file)."""
        return {"ruleIds": list(self.rule_ids), "earlier": list(self.earlier), "at": self.at}

    @classmethod
    def from_json(cls, data: Any) -> RateHits:
        """Read :meth:`to_json`'s form back; anything else raises ``ValueError``."""
        if isinstance(data, Mapping):
            rule_ids, earlier, at = data.get("ruleIds"), data.get("earlier"), data.get("at")
            if (
                isinstance(rule_ids, list)
                and isinstance(earlier, list)
                and len(rule_ids) == len(earlier)
                and all(isinstance(rule_id, str) for rule_id in rule_ids)
                and all(type(count) is int and count >= 0 for count in earlier)
                and isinstance(at, (int, float))
                and not isinstance(at, bool)
            ):
                return cls(tuple(rule_ids), tuple(earlier), float(at))
        raise ValueError(f"malformed rate hits: {data!r}")


class HitLog:
    """Passes hits on to ``counter`` and keeps them: the rate-limited rules of one decision."""

    __slots__ = ("_counter", "earlier", "rule_ids")

    def __init__(self, counter: SlidingWindowCounter) -> None:
        self._counter = counter
        self.rule_ids: list[str] = []
        self.earlier: list[int] = []

    def hit(self, key: str, window_ms: float) -> int:
        """Count the hit in the session's counter and remember it."""
        earlier = self._counter.hit(key, window_ms)
        self.rule_ids.append(key)
        self.earlier.append(earlier)
        return earlier

    def result(self, at: float) -> RateHits | None:
        """The hits kept (``None`` when there were none), made at ``at``."""
        if not self.rule_ids:
            return None
        return RateHits(tuple(self.rule_ids), tuple(self.earlier), at)


class ReplayedHits:
    """Answers as a decision made before did, and counts nothing.

    The hook door's post step evaluates the call again to record it; the pre step already
    counted it, so the post step must get the same answers without counting a second time.
    A key the earlier decision never hit answers ``0`` (the rule does not fire).
    """

    __slots__ = ("_answers",)

    def __init__(self, hits: RateHits | None) -> None:
        answers: dict[str, list[int]] = {}
        if hits is not None:
            for rule_id, earlier in zip(hits.rule_ids, hits.earlier, strict=True):
                answers.setdefault(rule_id, []).append(earlier)
        self._answers = answers

    def hit(self, key: str, window_ms: float) -> int:
        """The earlier decision's answer for ``key``."""
        answers = self._answers.get(key)
        return answers.pop(0) if answers else 0
