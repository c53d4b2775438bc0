"""The continuity check of each hook event (:mod:`.hook_continuity`): before the event, a chain
its witness proves lost, a witness gone while the chain is there, a witness that cannot be read,
or a session first seen in its middle; after it, the chain as the event left it, noted in the
witness.

A session's witness is written before its event records anything (when there is none yet) and
again after it, so whatever this door records has a witness by then, parallel first events
included: a chain is never there before its witness. So a witness gone while the session's
chain is there was removed (by a name built at run time, out of the store rule's reading), and
what was cut or replaced with it is unseen: its absence is a lost chain (``ChainLost``, ``how:
witnessLost``, FAIL). Not at a ``SessionStart`` resuming a session that ended (a compaction's
or ``/clear``'s start comes within a session, whatever its chain ends with): what happened
between the two runs (the store or the witnesses' folder moved or cleared, a door without
witnesses before an upgrade) is not the session's, as the host's settings changed between
sessions are not. A witness that cannot be written (its folder not writable, or a file in its
place) is said at once, at the first event that meets it, before any chain: a
``ContinuityUnknown`` WARN, recorded once. So a chain that does not say so had its witness, and
one gone that can no longer be written was removed, the folder made unwritable after it: a lost
chain all the same (``witnessLost``, ``witness: unwritable``, FAIL).

No witness and no chain at an event other than a start opening or resuming the session, while
the host's transcript shows this door's refusal of a call of the session: the door ran before
and wrote both; they were erased together (``ChainLost``, ``how: rolledBack``, FAIL). The same
when the transcript holds the mark the door's ``pre`` answers leave there (:mod:`.hook_marks`)
for a call of the session (``how: erased``): calls made before the hooks were installed carry
none, so a genuine mid-session install is still a ``MidSessionStart``.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_harness_audit.audit.continuity_files import (
    BETWEEN_DIGESTS_KEY,
    BETWEEN_KEY,
    SEALED_KEY,
    SPANS_KEY,
    WitnessUnreadable,
    read_witness,
    witness_lock,
    witness_path,
    write_witness,
)
from pytest_harness_audit.audit.errors import AuditError, ChainError
from pytest_harness_audit.audit.reader import iter_records
from pytest_harness_audit.doors.hook_continuity import (
    ERASED,
    LOST_TOOL,
    MID_SESSION_TOOL,
    ROLLED_BACK,
    SESSION_START,
    UNKNOWN_TOOL,
    UNREADABLE,
    UNWRITABLE,
    WITNESS_LOST,
    WITNESS_UNREADABLE,
    ChainState,
    HookEvent,
    Loss,
    find_loss,
    note_continuity,
    record_loss,
    transcript_size,
    transcript_tool_uses,
)
from pytest_harness_audit.doors.hook_faults import record_kept_faults
from pytest_harness_audit.doors.hook_marks import marked_calls
from pytest_harness_audit.doors.hook_unfinished import refused_here, transcript_uses
from pytest_harness_audit.policy import Policy

_AFTER_A_CALL = frozenset({"PostToolUse", "PostToolUseFailure"})
#: The ``source`` of a start within a running session (never after its end).
_WITHIN = frozenset({"compact", "clear"})


def before_event(
    storage: Path, policy: Policy, text: str, environ: Mapping[str, str] | None = None
) -> HookEvent | None:
    """Check the session's continuity before a hook handles ``text``: record a lost chain, a
    witness gone, or a session first seen in its middle (see the module doc). Returns the
    event for :func:`after_event` (``None`` when a note could not be written: the witness
    stays)."""
    event = HookEvent.parse(text)
    if event is None:
        return None
    path = witness_path(storage, event.session_id, environ)
    before = _transcript_before(event, path)
    gone = _witness_gone(storage, event, path)
    kept = _keep_witness(storage, event, path, environ)  # before anything is recorded
    with contextlib.suppress(ChainError):  # the event meets the same failure and says so
        record_kept_faults(storage, policy, event.session_id)
    if gone is not None:
        return event if _record_gone(storage, policy, event, gone, kept=kept) else None
    loss = find_loss(storage, event, environ)
    if loss is not None:
        return event if record_loss(storage, policy, event, loss) else None
    try:
        read_witness(path)
    except WitnessUnreadable as exc:
        # the door writes its witness whole, as JSON: one that cannot be read was written over
        # or put out of reach (a link, a FIFO, a folder in its place), and what it vouched for
        # (a chain cut or replaced with it) is unseen: a lost chain, said once
        if _said(storage, event.session_id, UNREADABLE):
            return event
        records = ChainState.read(storage, event.session_id).count
        loss = Loss(WITNESS_UNREADABLE, records, (), problem=str(exc))
        return event if record_loss(storage, policy, event, loss) else None
    begun = ChainState.read(storage, event.session_id).first is not None
    if not kept and not _said(storage, event.session_id, UNWRITABLE):
        # said at once, before any chain: a chain that does not say so had its witness
        records = ChainState.read(storage, event.session_id).count
        if not _note_unwritable(storage, policy, event, records):
            return None
    if begun or _resumes(event):
        return event  # a chain its witness vouches for, or a session (re)opened by the host
    refused = door_refusals(event)
    if refused:  # the door ran in this session and left no chain: erased with its witness
        loss = Loss(ROLLED_BACK, len(refused), refused)
        return event if record_loss(storage, policy, event, loss) else None
    # the door answered calls of the session (its mark) while no witness was there: each of
    # them wrote one before its answer, so it was erased with the store
    answered = marked_calls(event.transcript, event.session_id, before) if before else ()
    if answered:
        loss = Loss(ERASED, len(answered), answered)
        return event if record_loss(storage, policy, event, loss) else None
    if event.event == SESSION_START:
        return event
    earlier = [c for c in transcript_tool_uses(event.transcript) if c != event.tool_use_id]
    late = event.event in _AFTER_A_CALL
    if earlier:
        details: dict[str, Any] = {
            "opened": "mid-session",
            "earlierToolCalls": len(earlier),
            "event": event.event,
        }
        # a first event that closes a call whose start the door never saw: the hooks came
        # during the call, or the call erased the store and its witness
        judged = ("WARN", f"the session was first seen at {event.event}") if late else None
        if not note_continuity(
            storage, policy, event, MID_SESSION_TOOL, "session", details, judged
        ):
            return None
    return event


def _transcript_before(event: HookEvent, path: Path) -> int | None:
    """The transcript's length when the session's witness is found missing at the event's
    start (``None``: a witness is there, or no transcript). A mark of the door in those bytes
    was written after a witness was (each ``pre`` writes one before it answers); a parallel
    first event's mark lies beyond them."""
    if os.path.lexists(path):
        return None  # the ordinary case: one stat
    size = transcript_size(event.transcript)
    return None if os.path.lexists(path) else size


def door_refusals(event: HookEvent) -> tuple[str, ...]:
    """The ``tool_use_id`` of the calls the host's transcript shows this door refused in the
    session (an error result holding its refusal, ``[blocked] [web4-…``), but the event's own:
    the door ran before this event, so a chain and a witness were written then."""
    uses = transcript_uses(event.transcript, event.session_id)
    refused = refused_here(uses, set(), anywhere=True)
    return tuple(use.use_id for use in refused if use.use_id != event.tool_use_id)


def _witness_gone(storage: Path, event: HookEvent, path: Path) -> int | None:
    """The records of the session's chain when its witness is gone (``None``: no chain, a
    witness there or unreadable, or a start resuming an ended session). The chain is read
    first: a witness is written before any chain, so one missing after it was removed."""
    chain = ChainState.read(storage, event.session_id)
    if chain.first is None:
        return None
    try:
        if read_witness(path) is not None:
            return None
    except WitnessUnreadable:
        return None  # its own note
    if _resumes(event) and _ended(storage, event.session_id):
        return None
    return chain.count


def _resumes(event: HookEvent) -> bool:
    """Whether the event is a start that may follow the session's end: the host resumes an
    ended session so; a compaction or ``/clear`` comes within one."""
    return event.event == SESSION_START and event.source not in _WITHIN


def _ended(storage: Path, session_id: str) -> bool:
    """Whether the chain's last record is a ``SessionEnd`` (a start now resumes the session)."""
    last: Mapping[str, Any] = {}
    with contextlib.suppress(AuditError, OSError, ValueError):
        for record in iter_records(storage, session_id):
            last = record
    return last.get("kind") == "session" and last.get("tool") == "SessionEnd"


def _keep_witness(
    storage: Path, event: HookEvent, path: Path, environ: Mapping[str, str] | None
) -> bool:
    """Write the session's witness (the chain as it is now) when there is none, before the
    event records anything. True when a witness is there (an unreadable one included: its own
    note says so); False when none can be written."""
    try:
        if read_witness(path) is not None:
            return True
    except WitnessUnreadable:
        return True  # rewritten after the event (its note is before_event's)
    with (
        contextlib.suppress(OSError, ChainError, WitnessUnreadable),
        witness_lock(storage, environ),
    ):
        if read_witness(path) is None:  # a parallel first event may have written it
            _note_chain(path, storage, event)
        return read_witness(path) is not None
    return False


def _record_gone(
    storage: Path, policy: Policy, event: HookEvent, records: int, *, kept: bool
) -> bool:
    """Record a witness gone while the chain held ``records``: a lost chain, or, when no
    witness can be written again, an unknown continuity (once). False: no note written."""
    if kept:
        return record_loss(storage, policy, event, Loss(WITNESS_LOST, records, ()))
    if _said(storage, event.session_id, UNWRITABLE):
        return True  # never written since the chain said so: nothing was removed
    # the chain does not say its witness could not be written: it had one, now removed, and
    # its folder was made unwritable after (or replaced by a file)
    loss = Loss(WITNESS_LOST, records, ())
    return record_loss(storage, policy, event, loss, unwritable=True)


def _note_unwritable(storage: Path, policy: Policy, event: HookEvent, records: int) -> bool:
    """Record that the session's witness cannot be written (a WARN, once a session)."""
    reason = (
        "the session's continuity witness cannot be written (its folder cannot be made or "
        "written): a lost chain is unseen"
    )
    problem = {"witness": UNWRITABLE, "chainRecords": records, "event": event.event}
    return note_continuity(storage, policy, event, UNKNOWN_TOOL, "note", problem, ("WARN", reason))


def _said(storage: Path, session_id: str, witness: str) -> bool:
    """Whether the chain already says its witness is ``witness`` (:data:`UNWRITABLE`: a
    ``ContinuityUnknown`` note, or a lost chain recorded while none could be written again;
    :data:`UNREADABLE`: a lost chain recorded for a witness that could not be read)."""
    with contextlib.suppress(AuditError, OSError, ValueError):
        for record in iter_records(storage, session_id):
            said = record.get("continuity")
            if record.get("tool") not in (UNKNOWN_TOOL, LOST_TOOL) or not isinstance(said, dict):
                continue
            if said.get("witness") == witness:
                return True
    return False


def after_event(
    storage: Path, event: HookEvent | None, environ: Mapping[str, str] | None = None
) -> None:
    """Note the chain as this event left it in the session's witness (under the witness lock,
    keeping the seals of pending files other events wrote, :mod:`.hook_pending_seal`)."""
    if event is None:
        return
    with contextlib.suppress(OSError, ChainError), witness_lock(storage, environ):
        _note_chain(witness_path(storage, event.session_id, environ), storage, event)


def _note_chain(path: Path, storage: Path, event: HookEvent) -> None:
    try:
        old = read_witness(path) or {}
    except WitnessUnreadable:
        old = {}  # written anew (before_event recorded the problem)
    now = ChainState.read(storage, event.session_id)
    settled = "transcriptOffset" in old or transcript_size(event.transcript) is None
    same = (old.get("count"), old.get("first"), old.get("head")) == (now.count, now.first, now.head)
    if same and settled and old:
        return  # nothing new (a pre step records nothing for an allowed call)
    data: dict[str, Any] = {
        "sessionId": event.session_id,
        "storage": os.path.realpath(storage),
        "opened": old.get("opened", time.time()),
        "count": now.count,
        "first": now.first,
        "updated": time.time(),
    }
    if now.head is not None and now.size is not None:
        data.update(head=now.head, size=now.size)
    for kept in ("transcriptOffset", SEALED_KEY, SPANS_KEY, BETWEEN_KEY, BETWEEN_DIGESTS_KEY):
        if kept in old:
            data[kept] = old[kept]
    if "transcriptOffset" not in old:
        size = transcript_size(event.transcript)
        if size is not None:
            data["transcriptOffset"] = size
    write_witness(path, data)


__all__ = ["UNWRITABLE", "after_event", "before_event", "door_refusals"]
