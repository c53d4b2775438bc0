"""Best-of timings by wall clock and by this process's CPU time."""

from __future__ import annotations

import time
from collections.abc import Callable


class Timing:
    """Best wall-clock and CPU seconds seen for one step."""

    def __init__(self) -> None:
        self.wall = float("inf")
        self.cpu = float("inf")

    def measure(self, action: Callable[[], object]) -> None:
        """Run ``action`` once and keep the better times."""
        wall, cpu = time.perf_counter(), time.process_time()
        action()
        self.cpu = min(self.cpu, time.process_time() - cpu)
        self.wall = min(self.wall, time.perf_counter() - wall)

    def rates(self, count: int) -> tuple[float, float]:
        """``count`` per wall second and per CPU second."""
        return count / self.wall, count / max(self.cpu, 1e-9)
