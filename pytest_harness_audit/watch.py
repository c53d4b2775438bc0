"""Who is told of each ``Harness`` made: the plugin holds a test to its markers for the sessions
its body made directly (``Harness.create``), as for its fixtures'.

Cheap to import (the plugin opens a block around every test body): it loads nothing else.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

#: The open :func:`watch_sessions` blocks' watchers, innermost last.
_WATCHERS: list[Callable[[Any], None]] = []


@contextmanager
def watch_sessions(watcher: Callable[[Any], None]) -> Iterator[None]:
    """Call ``watcher`` with every ``Harness`` made inside the block and no block opened in it
    (a pytest run inside a test, the ``harness_factory`` fixture, keep their own)."""
    _WATCHERS.append(watcher)
    try:
        yield
    finally:
        _WATCHERS.remove(watcher)


def made(session: Any) -> None:
    """Tell the innermost open block of a new session."""
    if _WATCHERS:
        _WATCHERS[-1](session)
