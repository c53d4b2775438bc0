"""A regex searched only where it can match: over a text holding its necessary literals.

Most program-text patterns (``exec|eval|…|subprocess``, a credential file's name) find nothing in
most texts, and Python's regex engine tries each of their branches at every position before it
says so. Every match of such a pattern holds some literal text (the analysis of
:func:`~.requirements.python_regex_requirement`): when a text holds none of it, one automaton scan
(:class:`~.literal_scan.Prefilter`) says no match is possible, and the regex is not run. A text the
scan cannot clear, one that is not ASCII (case folding is left to the regex), and a pattern that
requires no literal are searched as before: the answers are the regex's own.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Final

from pytest_harness_audit.policy.literal_scan import Prefilter
from pytest_harness_audit.policy.requirements import python_regex_requirement


class LiteralGate:
    """``pattern`` with its searches skipped over texts that cannot hold a match."""

    __slots__ = ("_clears", "_ready", "pattern")

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern: Final = pattern
        #: Whether an ASCII text holds none of the literals (``None``: the pattern requires none).
        self._clears: Callable[[str], bool] | None = None
        self._ready = False

    def may_match(self, text: str) -> bool:
        """Whether ``text`` could hold a match of the pattern (``False``: it cannot)."""
        if not self._ready:
            self._build()
        clears = self._clears
        return clears is None or not text.isascii() or not clears(text)

    def search(self, text: str) -> re.Match[str] | None:
        """``pattern.search(text)``."""
        return self.pattern.search(text) if self.may_match(text) else None

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        """``pattern.finditer(text)``."""
        return self.pattern.finditer(text) if self.may_match(text) else iter(())

    def _build(self) -> None:
        requirement = python_regex_requirement(self.pattern)
        if requirement is not None:
            self._clears = Prefilter([requirement]).clears
        self._ready = True


__all__ = ["LiteralGate"]
