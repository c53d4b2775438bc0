"""Advisory file locks (``fcntl.flock``) on a session's lock file beside its chain.

Every appender takes the exclusive lock around one append; readers that need a consistent
snapshot of anchor and chain length take the shared lock for the moment of reading.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def open_lock_file(path: Path) -> int:
    """Open (creating if needed) the lock file and return its descriptor."""
    return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)


@contextmanager
def exclusive(fd: int) -> Iterator[None]:
    """Hold the exclusive lock on an open lock-file descriptor."""
    fcntl.flock(fd, fcntl.LOCK_EX)
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
        fcntl.flock(fd, fcntl.LOCK_SH)
        try:
            yield True
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
