"""Sliding-window counters for ``match.rateLimit`` (the session owns one)."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable


class SlidingWindowCounter:
    """Counts matching calls per rule inside a sliding window; the clock is injectable.

    ``clock`` returns seconds (``time.monotonic`` by default).
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
        hits.append(now)
        return earlier
