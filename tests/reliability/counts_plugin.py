"""Counts the reliability suites print at the end of a run — also under pytest-xdist.

A test adds to the session fixture ``reliability_counts``::

    def test_something(reliability_counts):
        reliability_counts.add("tamper", "mutations tried")

The terminal summary then shows one line per suite, e.g.
``reliability tamper: mutations tried 1200, detected 1200 (edit 100, insert 100, …)`` — the
parenthesis lists the ``detail`` counters, by name.

Under xdist, output printed on a worker is lost, and the controller never imports the conftest
files of this folder (it does not collect). So this module is loaded as a plugin by
``tests/conftest.py``, which every process imports at start-up: workers hand their counts to the
controller in ``workeroutput``, and the controller adds them up and prints them.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

_WORKER_KEY = "reliability_counts"
_DETAIL = "detail:"


class ReliabilityCounts:
    """Named counters per suite, in first-seen order."""

    def __init__(self) -> None:
        self._suites: dict[str, dict[str, int]] = {}
        self._notes: dict[str, list[str]] = {}

    def add(self, suite: str, name: str, amount: int = 1) -> None:
        """Add ``amount`` to counter ``name`` of ``suite``."""
        counters = self._suites.setdefault(suite, {})
        counters[name] = counters.get(name, 0) + amount

    def detail(self, suite: str, name: str, amount: int = 1) -> None:
        """Add to a breakdown counter, printed in parentheses after the main ones."""
        self.add(suite, _DETAIL + name, amount)

    def note(self, suite: str, text: str) -> None:
        """Add a measurement in words (printed after the suite's counters, ``; ``-separated)."""
        self._suites.setdefault(suite, {})
        self._notes.setdefault(suite, []).append(text)

    def get(self, suite: str, name: str) -> int:
        """The current value of one counter (0 when never added to)."""
        return self._suites.get(suite, {}).get(name, 0)

    def merge(self, data: dict[str, Any]) -> None:
        """Add the counters and notes of another process (the form ``to_data`` gives)."""
        for suite, counters in data["counts"].items():
            self._suites.setdefault(suite, {})
            for name, amount in counters.items():
                self.add(suite, name, amount)
        for suite, notes in data["notes"].items():
            for text in notes:
                self.note(suite, text)

    def to_data(self) -> dict[str, Any]:
        """A JSON-compatible copy."""
        return {
            "counts": {suite: dict(counters) for suite, counters in self._suites.items()},
            "notes": {suite: list(notes) for suite, notes in self._notes.items()},
        }

    def lines(self) -> list[str]:
        """One summary line per suite, suites in alphabetical order."""
        lines = []
        for suite in sorted(self._suites):
            counters = self._suites[suite]
            main = [f"{name} {n}" for name, n in counters.items() if not name.startswith(_DETAIL)]
            details = sorted(
                f"{name[len(_DETAIL) :]} {n}"
                for name, n in counters.items()
                if name.startswith(_DETAIL)
            )
            line = f"reliability {suite}: " + ", ".join(main)
            line += f" ({', '.join(details)})" if details else ""
            notes = self._notes.get(suite)
            lines.append(line + (f"; {'; '.join(notes)}" if notes else ""))
        return lines


_COUNTS = pytest.StashKey[ReliabilityCounts]()


def _counts(config: pytest.Config) -> ReliabilityCounts:
    return config.stash.setdefault(_COUNTS, ReliabilityCounts())


@pytest.fixture(scope="session")
def reliability_counts(pytestconfig: pytest.Config) -> ReliabilityCounts:
    """The run's reliability counters (see the module docstring)."""
    return _counts(pytestconfig)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """On an xdist worker: hand the counts to the controller."""
    workeroutput: dict[str, Any] | None = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput[_WORKER_KEY] = json.dumps(_counts(session.config).to_data())


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """On the xdist controller: add up what a finished worker counted."""
    data = getattr(node, "workeroutput", {}).get(_WORKER_KEY)
    if data:
        _counts(node.config).merge(json.loads(data))


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """Print one line per suite that counted anything."""
    if hasattr(config, "workerinput"):
        return
    lines = _counts(config).lines()
    if lines:
        terminalreporter.section("reliability counts")
        for line in lines:
            terminalreporter.write_line(line)
