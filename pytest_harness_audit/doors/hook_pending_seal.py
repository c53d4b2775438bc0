"""Sealed pending files: a call cannot rewrite what its own post step reads of it unseen.

An allowed ``pre`` leaves the call's pending file in the store (:mod:`.hook_asks`), and the
host runs the call before its ``post`` reads that file. A call whose code builds the store's
names at run time (the store rule cannot see it touch the store) could rewrite the file in
between: a workspace snapshot matching the state after it deleted files (post would see no
effects), fewer rate hits, an ``asked`` entry naming a prompt the user never saw; or remove it
(post would find no pre step, and judge the effects unknown at most).

So pre **seals** the file: it notes the SHA-256 of the bytes it wrote, with the few facts post
needs to record the call as pre decided it (the call's key, start, rate hits, whether and how
the host asked: :func:`~.hook_asks.sealed_facts`), in the session's continuity witness
(:mod:`.hook_continuity`, key ``sealed``). The witness is the second place that fits: it lives
outside the store (out of a project's reach by default, under the store rule like the store),
it is already the evidence the door keeps per session between its processes, compared at every
event, and ``audit prune`` removes it with its session. The chain would need a record per
allowed pre step (today it gets none) and could not drop a seal once its call is recorded; a
file of its own per call would be a new kind of file outside the store that nothing prunes.
Every change of a witness is a read, change and write under the witness lock
(:func:`~pytest_harness_audit.audit.continuity_files.witness_lock`, which the continuity note
after every event takes too), so the hook processes of parallel calls never lose each other's
seals. A call that wanted to hide its effects now has to rewrite two files in two places.

Every step that reads a pending file compares its bytes with the seal:

* the same, or no seal at all (no pre step came, or it came before the hooks sealed): as before;
* other bytes, or no file where pre sealed one: the file was changed (or removed) while the
  call ran. The call is recorded from the sealed facts, its effects unknown (what pre saw of
  the workspace cannot be trusted), and a ``note`` :data:`PENDING_CHANGED` (alerts
  :data:`PENDING_ALERT` and ``tamper_attempt``, judged FAIL by ``continuity``: the verdict
  reason ``continuity-fail`` of a lost chain) fails the session.

Pre seals the bytes it just wrote (the call runs only once pre has answered). A step that
rewrites the file (a ``PermissionRequest`` marking it asked, a reconciliation keeping a settled
call's state) adds the new hash before it writes, so a reader never sees a file its seal does
not cover, and only when the seal covered what the file held. A post (or ``PermissionDenied``)
drops the seal, then the file. ``SessionStart`` and ``SessionEnd`` compare the seals left (calls
whose post never came) before they clean the pending files, then drop them.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pytest_harness_audit.audit.atomic_file import read_own_file
from pytest_harness_audit.audit.continuity_files import (
    SEALED_KEY,
    WitnessUnreadable,
    read_witness,
    witness_lock,
    witness_path,
    write_witness,
)
from pytest_harness_audit.audit.errors import ChainError
from pytest_harness_audit.doors.chain_faults import open_gate
from pytest_harness_audit.gate.seam import Outcome
from pytest_harness_audit.gate.store_guard import TAMPER_ALERT
from pytest_harness_audit.policy import Policy

#: The tool name of the note of a pending file changed or removed behind its seal.
PENDING_CHANGED = "PendingChanged"
#: Its alert (beside ``tamper_attempt``).
PENDING_ALERT = "pending_changed"
#: The record field of that note.
PENDING_FIELD = "pendingFile"
_SUFFIX = ".json"


def pending_key(pending: Path) -> str:
    """The key a call's seal is kept under: its pending file's name without ``.json``."""
    return pending.name.removesuffix(_SUFFIX)


def digest(data: bytes) -> str:
    """The SHA-256 of a pending file's bytes, as a seal keeps it."""
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class Seal:
    """What pre (and every step that rewrote the file since) sealed of a call's pending file."""

    #: The hashes of the bytes written for the call (pending, then rewritten or settled).
    hashes: tuple[str, ...]
    #: The small facts of the pending state kept beside them (:func:`~.hook_asks.sealed_facts`).
    facts: Mapping[str, Any] = field(default_factory=dict)

    def holds(self, data: bytes | None) -> bool:
        """Whether ``data`` (``None``: no file) are bytes this seal covers."""
        return data is not None and digest(data) in self.hashes

    def broken(self, data: bytes | None) -> str | None:
        """``removed``, ``changed`` or ``None`` (the bytes are sealed)."""
        if data is None:
            return "removed"
        return None if self.holds(data) else "changed"

    @classmethod
    def of(cls, entry: Any) -> Seal | None:
        """The seal an entry of the witness holds (``None``: not a seal)."""
        if not isinstance(entry, Mapping):
            return None
        hashes = entry.get("sha256")
        facts = entry.get("facts")
        if not isinstance(hashes, list) or not all(isinstance(h, str) for h in hashes):
            return None
        return cls(tuple(hashes), dict(facts) if isinstance(facts, Mapping) else {})


def _seals_in(witness: Mapping[str, Any] | None) -> dict[str, Any]:
    seals = (witness or {}).get(SEALED_KEY)
    return dict(seals) if isinstance(seals, Mapping) else {}


def read_seals(storage: Path, session_id: str) -> dict[str, Seal]:
    """The session's seals by key (none when its witness is missing or unreadable)."""
    try:
        witness = read_witness(witness_path(storage, session_id))
    except WitnessUnreadable:
        return {}
    found = {key: Seal.of(entry) for key, entry in _seals_in(witness).items()}
    return {key: seal for key, seal in found.items() if seal is not None}


def read_seal(storage: Path, session_id: str, pending: Path) -> Seal | None:
    """The seal of the call whose pending file is ``pending`` (``None``: none)."""
    return read_seals(storage, session_id).get(pending_key(pending))


def seal(
    storage: Path,
    session_id: str,
    pending: Path,
    text: str | None,
    facts: Mapping[str, Any],
    *,
    fresh: bool = False,
) -> None:
    """Seal ``text`` (the bytes about to be, or just, written for the call) with ``facts``.

    ``fresh``: a new pre step, whose seal replaces any left under the key; else the hash is
    added to the call's seal (``None``: no new bytes, the facts only). A witness folder that
    cannot be written leaves the call unsealed (as it leaves the witness unwritten); its lock
    held by another process for long is a :class:`ChainError` (a pre step refuses the call).
    """
    key = pending_key(pending)
    path = witness_path(storage, session_id)
    with contextlib.suppress(OSError), witness_lock(storage):
        try:
            witness = read_witness(path) or {}
        except WitnessUnreadable:
            witness = {}  # written anew, as the next event's note of it does
        seals = _seals_in(witness)
        old = None if fresh else Seal.of(seals.get(key))
        hashes = list(old.hashes) if old is not None else []
        if text is not None:
            hashes.append(digest(text.encode("utf-8")))
        if not hashes:
            return  # nothing pre sealed, and nothing new: no seal to make
        kept = {**(old.facts if old is not None else {}), **facts}
        seals[key] = {"sha256": hashes, "facts": kept}
        write_witness(path, {**witness, SEALED_KEY: seals})


def unseal(storage: Path, session_id: str, keys: Iterable[str]) -> None:
    """Drop the seals of ``keys`` (their calls are recorded); best effort: a seal left behind
    is compared again, and dropped, at the session's next start or end."""
    wanted = set(keys)
    if not wanted:
        return
    path = witness_path(storage, session_id)
    with contextlib.suppress(OSError, ChainError), witness_lock(storage):
        try:
            witness = read_witness(path)
        except WitnessUnreadable:
            return
        seals = _seals_in(witness)
        if witness is None or not wanted & seals.keys():
            return
        for key in wanted:
            seals.pop(key, None)
        rest = {k: v for k, v in witness.items() if k != SEALED_KEY}
        write_witness(path, {**rest, SEALED_KEY: seals} if seals else rest)


def read_bytes(path: Path | None) -> bytes | None:
    """A pending file's bytes (``None``: there is none, or it cannot be read)."""
    if path is None:
        return None
    try:
        return read_own_file(path)  # a FIFO put in its place must not hang the step
    except OSError:
        return None


def record_broken(
    storage: Path,
    session_id: str,
    policy: Policy,
    root: str | None,
    *,
    event: str,
    key: str,
    how: str,
    tool: str | None = None,
) -> None:
    """Record that the pending file of call ``key`` was ``how`` (changed, removed) behind its
    seal: a ``note`` whose FAIL part is tamper evidence. It goes through a gate of its own, so
    no inspection of a call judges it."""
    what = "changed" if how == "changed" else "removed"
    reason = (
        f"the pending file of call {key} was {what} after its pre step sealed it: what the call "
        "did cannot be told, and its record keeps what pre decided"
    )
    details: dict[str, Any] = {"event": event, "call": key, "how": how}
    if tool is not None:
        details["tool"] = tool
    noted = open_gate(
        storage_dir=storage,
        session_id=session_id,
        policy=policy,
        root=root,
        door="hook",
    )
    try:
        decision = noted.unjudged(PENDING_CHANGED, "hook", details, target=None, kind="note")
        decision = replace(decision, alerts=(PENDING_ALERT, TAMPER_ALERT))
        extra = {
            PENDING_FIELD: dict(details),
            "judged": {"verdict": "FAIL", "caughtBy": "continuity", "reason": reason},
        }
        noted.run(
            PENDING_CHANGED,
            details,
            lambda _decision: Outcome("error", None, reason),
            extra=extra,
            decision=decision,
        )
    finally:
        noted.chain.close()


__all__ = [
    "PENDING_ALERT",
    "PENDING_CHANGED",
    "PENDING_FIELD",
    "Seal",
    "digest",
    "pending_key",
    "read_bytes",
    "read_seal",
    "read_seals",
    "record_broken",
    "seal",
    "unseal",
]
