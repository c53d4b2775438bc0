"""The post store's own writes told from anyone else's, for the gate's post-store watch
(:mod:`pytest_harness_audit.gate.post_store_watch`).

A post store's files are stamped (size, change time, inode of the database and its write-ahead
log) whenever this process looks at them: before and after each of its own transactions
(:func:`own_write`), and when a watch's window opens or closes. Between two looks the files
may change only inside one of this process's own writes: any other difference is a change made
by someone else, and every window open at that moment is marked with the files that changed.
A window thus sees a foreign change even when its call also sent messages, and whichever
thread of the process (a proxy serving a relayed agent, the test's own sends) made the own
writes. A change made while no window is open is taken in silently: nothing was being watched.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

#: The files of a post store a writer changes (the database and its write-ahead log); the
#: shared-memory index (``-shm``) is left out: a reader writes it.
SUFFIXES = ("", "-wal")
Stamp = tuple[tuple[int, int, int] | None, ...]

_LOCK = threading.RLock()
_TOKENS = itertools.count(1)


@dataclass
class _Database:
    known: Stamp | None = None
    open_windows: dict[int, set[str]] = field(default_factory=dict)


_DATABASES: dict[str, _Database] = {}


def stamp(database: Path | str) -> Stamp:
    """The stamp of the database's files now (``None`` for a file that is not there)."""
    stamps: list[tuple[int, int, int] | None] = []
    for suffix in SUFFIXES:
        try:
            info = os.lstat(f"{database}{suffix}")
        except OSError:
            stamps.append(None)
            continue
        stamps.append((info.st_size, info.st_ctime_ns, info.st_ino))
    return tuple(stamps)


def _observe(database: Path | str) -> _Database:
    """Look at the files (under ``_LOCK``): a difference from the last look marks the windows."""
    key = os.path.abspath(database)
    state = _DATABASES.setdefault(key, _Database())
    now = stamp(key)
    if state.known is not None and now != state.known:
        changed = {
            f"{key}{suffix}"
            for suffix, old, new in zip(SUFFIXES, state.known, now, strict=True)
            if old != new
        }
        for files in state.open_windows.values():
            files |= changed
    state.known = now
    return state


class OwnWrite:
    """One of this process's own writes to a database, begun: the files were looked at, and no
    window sees a change until the caller calls :meth:`end` or :meth:`abandon`."""

    def __init__(self, database: Path | str) -> None:
        self.database = database
        _LOCK.acquire()
        try:
            _observe(database)
        except BaseException:
            _LOCK.release()
            raise

    def end(self) -> None:
        """The write is over: what changed since it began is the process's own."""
        try:
            _DATABASES[os.path.abspath(self.database)].known = stamp(self.database)
        finally:
            _LOCK.release()

    def abandon(self) -> None:
        """Nothing was written after all (the write lock was not to be had)."""
        _LOCK.release()


@contextmanager
def own_write(database: Path | str) -> Iterator[None]:
    """Bracket one of this process's own writes to ``database`` (opening or closing the
    connection): what changes inside is not a foreign change."""
    write = OwnWrite(database)
    try:
        yield
    finally:
        write.end()


def open_window(database: Path | str) -> int:
    """Start watching ``database`` for foreign changes; the token for :func:`close_window`."""
    with _LOCK:
        state = _observe(database)
        token = next(_TOKENS)
        state.open_windows[token] = set()
        return token


def close_window(database: Path | str, token: int) -> list[str]:
    """Stop the window ``token``: the files someone else changed while it was open, sorted."""
    with _LOCK:
        state = _observe(database)
        return sorted(state.open_windows.pop(token, ()))


__all__ = [
    "SUFFIXES",
    "OwnWrite",
    "Stamp",
    "close_window",
    "open_window",
    "own_write",
    "stamp",
]
