"""Linux ``inotify`` through the C library: the event masks, the library, and reading events.

Shared by every watcher of the project: the live workspace (:mod:`.watch`), git's history
(:mod:`.history_watch`), credential reads (:mod:`.credential_reads`) and the auditor's
installation (:mod:`pytest_harness_audit.gate.install_events`).
"""

from __future__ import annotations

import ctypes
import os
import struct
import sys
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
