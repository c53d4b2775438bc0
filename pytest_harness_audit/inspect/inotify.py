"""Linux ``inotify`` through the C library: the event masks, the library, and reading events.

Shared by every watcher of the project: the live workspace (:mod:`.watch`), git's history
(:mod:`.history_watch`), credential reads (:mod:`.credential_reads`) and the auditor's
installation (:mod:`pytest_harness_audit.gate.install_events`).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import queue
import struct
import sys
import threading
from typing import Any

IN_ACCESS = 0x1
"""A file was read."""
IN_MODIFY = 0x2
"""A file was written."""
IN_ATTRIB = 0x4
"""Metadata changed (mode, owner, links, times)."""
IN_CLOSE_WRITE = 0x8
"""A file opened for writing was closed (a file written through ``mmap`` reports only this)."""
IN_CLOSE_NOWRITE = 0x10
"""A file not opened for writing was closed."""
IN_OPEN = 0x20
"""A file was opened."""
IN_MOVED_FROM = 0x40
"""An entry was moved out of the watched folder."""
IN_MOVED_TO = 0x80
"""An entry was moved into the watched folder."""
IN_CREATE = 0x100
"""An entry was created in the watched folder."""
IN_DELETE = 0x200
"""An entry was removed from the watched folder."""
IN_DELETE_SELF = 0x400
"""The watched path itself was removed."""
IN_MOVE_SELF = 0x800
"""The watched path itself was moved."""
IN_Q_OVERFLOW = 0x4000
"""The kernel's queue overflowed: events were lost."""
IN_IGNORED = 0x8000
"""The watch was removed (explicitly, or its path is gone)."""
IN_ONLYDIR = 0x01000000
"""Watch the path only if it is a folder."""
IN_DONT_FOLLOW = 0x02000000
"""Do not follow a symbolic link at the path."""
IN_ISDIR = 0x40000000
"""The event's subject is a folder."""

_EVENT = struct.Struct("iIII")


def _libc() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.inotify_init1  # noqa: B018 - probe the symbol
    except (OSError, AttributeError):
        return None
    return libc


_LIBC = _libc()


def inotify_libc() -> Any:
    """The C library when it offers inotify (Linux), else ``None``."""
    return _LIBC


def read_events(fd: int) -> list[tuple[int, int, str]]:
    """Every event queued on the non-blocking inotify descriptor ``fd``: ``(wd, mask, name)``."""
    events: list[tuple[int, int, str]] = []
    while True:
        try:
            data = os.read(fd, 1 << 16)
        except BlockingIOError:
            return events
        at = 0
        while at + _EVENT.size <= len(data):
            wd, mask, _cookie, length = _EVENT.unpack_from(data, at)
            raw = data[at + _EVENT.size : at + _EVENT.size + length].rstrip(b"\0")
            events.append((wd, mask, os.fsdecode(raw)))
            at += _EVENT.size + length


_CLOSING_LOCK = threading.Lock()
_closing: tuple[int, queue.SimpleQueue[int]] | None = None  # (pid, the closer's queue)


def _close_queued(fds: queue.SimpleQueue[int]) -> None:
    while True:
        fd = fds.get()
        with contextlib.suppress(OSError):
            os.close(fd)


def close_later(fd: int) -> None:
    """Close the inotify descriptor ``fd`` on a thread of its own, so its owner does not wait.

    Closing one that held watches waits for the kernel to retire them (some 10 ms, whatever
    their number), and a session closes a few; nothing reads ``fd`` once it is handed here.
    Where no thread can be started (the interpreter shutting down) it is closed at once.
    """
    global _closing
    with _CLOSING_LOCK:
        pid = os.getpid()
        if _closing is None or _closing[0] != pid:  # a forked child has no closer thread
            fds: queue.SimpleQueue[int] = queue.SimpleQueue()
            closer = threading.Thread(
                target=_close_queued, args=(fds,), name="inotify-closer", daemon=True
            )
            try:
                closer.start()
            except RuntimeError:
                os.close(fd)
                return
            _closing = (pid, fds)
        _closing[1].put(fd)
