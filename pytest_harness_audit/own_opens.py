"""How often this process (the auditor) opened each file to read it, by inode.

The kernel names no reader of a file (:mod:`pytest_harness_audit.inspect.credential_reads`).
When the auditor itself reads a workspace file while an agent's run is watched (judging a
search reads the credential files it could match), each such open is counted here, so the
credential-read watch can keep the opens beyond the auditor's: the agent's. A module of no
layer: the shell reading (``policy``) counts, the watch (``inspect``) reads the counts.
"""

from __future__ import annotations

import os
import threading

_LOCK = threading.Lock()
_OPENS: dict[tuple[int, int], int] = {}


def note_own_open(info: os.stat_result) -> None:
    """Count one open, by this process, of the file whose ``fstat`` is ``info``."""
    key = (info.st_dev, info.st_ino)
    with _LOCK:
        _OPENS[key] = _OPENS.get(key, 0) + 1


def own_opens(key: tuple[int, int]) -> int:
    """How often this process opened the file ``(st_dev, st_ino)`` so far."""
    with _LOCK:
        return _OPENS.get(key, 0)


__all__ = ["note_own_open", "own_opens"]
