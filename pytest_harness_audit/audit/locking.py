"""Advisory file locks (``fcntl.flock``) on a session's lock file beside its chain.

Every appender takes the exclusive lock around one append; readers that need a consistent
snapshot of anchor and chain length take the shared lock for the moment of reading.

An append holds the lock for moments, so a lock held for :data:`LOCK_TIMEOUT_S` seconds is held
by something else — a process the audited agent started on the lock file, say. Waiting for it
forever would hang the gate (a host kills a hook that hangs, and then runs the call it was
asked about), so the wait ends with :class:`~.errors.ChainError`, which a gate turns into a
refusal.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pytest_harness_audit.audit.errors import ChainError

#: The longest wait for a session's lock before the operation fails.
LOCK_TIMEOUT_S = 15.0
_FIRST_PAUSE_S = 0.0005
_LONGEST_PAUSE_S = 0.02


def _acquire(fd: int, operation: int, what: str, timeout: float | None = None) -> None:
    """Take the lock, waiting at most ``timeout`` seconds (default :data:`LOCK_TIMEOUT_S`)."""
    limit = LOCK_TIMEOUT_S if timeout is None else timeout
    try:
        fcntl.flock(fd, operation | fcntl.LOCK_NB)
        return
    except BlockingIOError:
        pass
    deadline = time.monotonic() + limit
    pause = _FIRST_PAUSE_S
    while True:
        time.sleep(pause)
        try:
            fcntl.flock(fd, operation | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise ChainError(
                    f"{what}: the session's lock has been held by another process for over "
                    f"{limit:g} s; the call is refused"
                ) from None
        pause = min(pause * 2, _LONGEST_PAUSE_S)


def wait_exclusive(fd: int, what: str) -> None:
    """Take the exclusive lock another process holds now: wait for it at most
    :data:`LOCK_TIMEOUT_S` seconds (:class:`~.errors.ChainError` then), naming ``what``."""
    _acquire(fd, fcntl.LOCK_EX, what)


def open_lock_file(path: Path) -> int:
    """Open (creating if needed) the lock file and return its descriptor."""
    return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)


def _name_of(fd: int) -> str:
    """The path of an open descriptor where the system tells it (Linux), else its number."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return f"lock file descriptor {fd}"


@contextmanager
def exclusive(fd: int) -> Iterator[None]:
    """Hold the exclusive lock on an open lock-file descriptor (:class:`~.errors.ChainError`
    after :data:`LOCK_TIMEOUT_S` seconds held by another)."""
    _acquire(fd, fcntl.LOCK_EX, _name_of(fd))
    try:
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)


@contextmanager
def shared_lock(path: Path) -> Iterator[bool]:
    """Hold the shared lock of ``path`` if the lock file can be opened; yield whether it is held.

    A storage directory that cannot be written (a copied-out archive, say) is still readable:
    without a lock file there can be no concurrent appender to wait for.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        yield False
        return
    try:
        _acquire(fd, fcntl.LOCK_SH, str(path))
        try:
            yield True
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
