"""Deadline clocks of the social endpoint: the system clock, and a manual clock a test advances.

These drive collective deadlines and scripted delays (epoch milliseconds, with subscribers told
when time moves). They are not the audit chain's timestamps (:mod:`pytest_harness_audit.audit.clock`
writes and reads record time stamps).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol


class DeadlineClock(Protocol):
    """What the social endpoint needs from a clock: the time, and word when it moves."""

    def now_ms(self) -> int:
        """The current time in epoch milliseconds."""
        ...

    def subscribe(self, callback: Callable[[], None]) -> None:
        """Ask to be called after time moves forward (a clock that cannot tell may ignore it)."""
        ...


class SystemClock:
    """Wall-clock time. Deadlines are processed whenever the endpoint is used or polled."""

    def now_ms(self) -> int:
        """The current time in epoch milliseconds."""
        return time.time_ns() // 1_000_000

    def subscribe(self, callback: Callable[[], None]) -> None:
        """Ignored: the endpoint polls a system clock lazily."""


class ManualClock:
    """A clock that moves only when a test calls :meth:`advance`; subscribers run after each."""

    def __init__(self, start_ms: int = 0) -> None:
        self._now_ms = start_ms
        self._subscribers: list[Callable[[], None]] = []

    def now_ms(self) -> int:
        """The current (manual) time in milliseconds."""
        return self._now_ms

    def subscribe(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` after every :meth:`advance`."""
        self._subscribers.append(callback)

    def advance(self, seconds: float) -> None:
        """Move the time forward by ``seconds`` (not backwards) and run the subscribers."""
        if seconds < 0:
            raise ValueError(f"a clock cannot move backwards (advance({seconds!r}))")
        self._now_ms += round(seconds * 1000)
        for callback in list(self._subscribers):
            callback()
