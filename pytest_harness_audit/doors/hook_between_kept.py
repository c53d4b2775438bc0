"""Which protected states the hook door has kept between events, noted outside the store.

:mod:`.hook_between` keeps the state of a workspace's protected files in the store, and a
state that is not there reads as "none kept yet": the first event of a session, or of a
workspace root. A process a call left running that could write a persona file could also
delete that state (by a name built at run time), and the next event would keep a new one
without comparing. So the name of every state kept is noted in the session's continuity
witness (:mod:`.hook_continuity`, outside the store): a state the witness names and the store
no longer holds was deleted, which is a ``tamper_attempt`` judged FAIL. The owner's uncommitted
work kept between events (:mod:`.hook_uncommitted`) is noted the same way, by a name of its own.
"""

from __future__ import annotations

import contextlib
import os

from pytest_harness_audit.audit.continuity_files import (
    BETWEEN_KEY,
    WitnessUnreadable,
    read_witness,
    witness_lock,
    witness_path,
    write_witness,
)
from pytest_harness_audit.audit.errors import ChainError

#: What an unreadable state's reason ends with when the state was deleted.
STATE_DELETED = "the kept state was deleted"


def _names(witness: object) -> list[str]:
    found = witness.get(BETWEEN_KEY) if isinstance(witness, dict) else None
    return [name for name in found if isinstance(name, str)] if isinstance(found, list) else []


def note_kept(storage: str | os.PathLike[str], session_id: str, name: str) -> None:
    """Note in the session's witness that the state ``name`` (its file name) was kept; best
    effort, as the witness itself (a witness folder that cannot be written notes nothing)."""
    path = witness_path(storage, session_id)
    try:
        if name in _names(read_witness(path)):
            return  # the common case: noted at the session's first keep
    except WitnessUnreadable:
        return  # the next event's continuity check says so
    with contextlib.suppress(OSError, ChainError), witness_lock(storage):
        try:
            witness = read_witness(path)
        except WitnessUnreadable:
            return
        if witness is None:
            return  # none yet: the event's own continuity note makes it, the next keep notes
        names = _names(witness)
        if name not in names:
            write_witness(path, {**witness, BETWEEN_KEY: [*names, name]})


def was_kept(storage: str | os.PathLike[str], session_id: str, name: str) -> bool:
    """Whether the session's witness notes that the state ``name`` was kept."""
    try:
        return name in _names(read_witness(witness_path(storage, session_id)))
    except WitnessUnreadable:
        return False


__all__ = ["STATE_DELETED", "note_kept", "was_kept"]
