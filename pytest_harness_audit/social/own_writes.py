"""How many transactions this process's post stores made on each database: what tells the
gate's post-store watch (:mod:`pytest_harness_audit.gate.post_store_watch`) the session's own
writes from anyone else's."""

from __future__ import annotations

import os
import threading
from pathlib import Path

_LOCK = threading.Lock()
_WRITES: dict[str, int] = {}


def note_own_write(database: Path) -> None:
    """Count one transaction of this process's post store on ``database``."""
    key = os.path.abspath(database)
    with _LOCK:
        _WRITES[key] = _WRITES.get(key, 0) + 1


def own_writes(database: Path) -> int:
    """How many transactions this process's post stores made on ``database``."""
    with _LOCK:
        return _WRITES.get(os.path.abspath(database), 0)


__all__ = ["note_own_write", "own_writes"]
