"""Which protected states the hook door has kept between events, noted outside the store.

:mod:`.hook_between` keeps the state of a workspace's protected files in the store, and a
state that is not there reads as "none kept yet": the first event of a session, or of a
workspace root. A process a call left running that could write a persona file could also
delete that state (by a name built at run time), and the next event would keep a new one
without comparing, or rewrite it to match what it changed (the next event would compare with
that). So the name of every state kept is noted in the session's continuity witness
(:mod:`.hook_continuity`, outside the store), with the SHA-256 of the bytes kept (the last two:
a reader may meet the file just before or after a parallel event's write): a state the witness
names and the store no longer holds was deleted, and one whose bytes match neither digest was
rewritten, each a ``tamper_attempt`` judged FAIL. The owner's uncommitted
work kept between events (:mod:`.hook_uncommitted`) is noted the same way, by a name of its own.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from pathlib import Path

from pytest_harness_audit.audit.atomic_file import replace_file
from pytest_harness_audit.audit.continuity_files import (
    BETWEEN_DIGESTS_KEY,
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
#: What an unreadable state's reason ends with when its bytes are not those kept.
STATE_REWRITTEN = "the kept state was rewritten since it was kept"


def _names(witness: object) -> list[str]:
    found = witness.get(BETWEEN_KEY) if isinstance(witness, dict) else None
    return [name for name in found if isinstance(name, str)] if isinstance(found, list) else []


def _digests(witness: object, name: str) -> list[str]:
    found = witness.get(BETWEEN_DIGESTS_KEY) if isinstance(witness, dict) else None
    listed = found.get(name) if isinstance(found, dict) else None
    return [d for d in listed if isinstance(d, str)] if isinstance(listed, list) else []


def note_kept(
    storage: str | os.PathLike[str], session_id: str, name: str, data: bytes | None = None
) -> None:
    """Note in the session's witness that the state ``name`` (its file name) was kept, and the
    digest of its bytes ``data`` (noted before they are written: a reader never meets bytes
    no digest covers); best effort, as the witness itself (a witness folder that cannot be
    written notes nothing)."""
    path = witness_path(storage, session_id)
    digest = None if data is None else hashlib.sha256(data).hexdigest()
    try:
        seen = read_witness(path)
        if name in _names(seen) and (digest is None or _digests(seen, name)[-1:] == [digest]):
            return  # the common case: noted at the session's first keep, the bytes unchanged
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
        update: dict[str, object] = {BETWEEN_KEY: names if name in names else [*names, name]}
        if digest is not None:
            kept = witness.get(BETWEEN_DIGESTS_KEY)
            digests = dict(kept) if isinstance(kept, dict) else {}
            last = _digests(witness, name)
            digests[name] = [*last[-1:], digest] if last[-1:] != [digest] else last[-2:]
            update[BETWEEN_DIGESTS_KEY] = digests
        write_witness(path, {**witness, **update})


def keep_noted(storage: str | os.PathLike[str], session_id: str, path: Path, data: bytes) -> None:
    """Write the state ``data`` at ``path``, noted in the witness (:func:`note_kept`). A state
    kept before has its new digest noted before its bytes are replaced (a reader never meets
    bytes no digest covers); a first one is noted once written, so a parallel event never
    finds a state the witness names missing (it reads the first bytes as noting none)."""
    if path.exists():
        note_kept(storage, session_id, path.name, data)
        replace_file(path, data)
    else:
        replace_file(path, data)
        note_kept(storage, session_id, path.name, data)


def rewritten(storage: str | os.PathLike[str], session_id: str, name: str, data: bytes) -> bool:
    """Whether the state ``name`` read as ``data`` is none of the bytes the witness noted for
    it (``False`` when it noted none: a state kept before digests were noted)."""
    try:
        digests = _digests(read_witness(witness_path(storage, session_id)), name)
    except WitnessUnreadable:
        return False
    return bool(digests) and hashlib.sha256(data).hexdigest() not in digests


def was_kept(storage: str | os.PathLike[str], session_id: str, name: str) -> bool:
    """Whether the session's witness notes that the state ``name`` was kept."""
    try:
        return name in _names(read_witness(witness_path(storage, session_id)))
    except WitnessUnreadable:
        return False


__all__ = [
    "STATE_DELETED",
    "STATE_REWRITTEN",
    "keep_noted",
    "note_kept",
    "rewritten",
    "was_kept",
]
