"""The hook door's continuity: a session's chain lost between two hook processes is evidence.

Each hook event is a fresh process, so no writer's witness survives in memory: a store deleted
by a name the store rule cannot read (one built at run time) used to leave the next process to
start a new chain at genesis, and the session to end with a valid, shorter chain. So the door
keeps a small **continuity witness** per session *outside* the store (see :func:`witness_dir`):
after every event it notes the chain's record count, the hash of its first line, its head and
length (the anchor's) and, at the session's first event, how long the host's transcript was.
Before every event it compares:

* the witness names a chain and there is none, fewer records, one that begins with another
  line, or one whose witnessed head no longer ends where it did: lost, cut or replaced. The
  door records a ``note`` (``ChainLost``, alerts ``chain_lost`` and ``tamper_attempt``) with a
  FAIL part: "the session's chain was lost: N earlier records missing", and the tool calls of
  the transcript (``transcript_path``) made since the witness was first written;
* no witness and no chain at an event other than ``SessionStart``, while the transcript holds
  tool calls: the hooks were installed mid-session. Nothing was ever recorded, so nothing was
  lost: a ``session`` note says how many calls came before, and the verdict is not touched,
  unless that event closes a call (``PostToolUse``, ``PostToolUseFailure``) whose start the
  door never saw (the hooks came during it, or it erased store and witness): then it WARNs;
* a witness that cannot be read or is not JSON (written over, or a link, a FIFO or a folder in
  its place): the door writes it whole, so it was changed, and what it vouched for is unseen
  (``ChainLost``, ``how: witnessUnreadable``, FAIL, once);
* no witness while the chain is there: the witness was removed, and whatever was cut or
  replaced with it is unseen (``ChainLost``, ``how: witnessLost``, FAIL; the events' side of
  this is :mod:`.hook_continuity_events`, which writes a witness before any chain).

A witness erased with the whole store (by names built at run time) looks like a first event,
unless the transcript shows a refusal of this door before it: the door ran in the session, so a
chain and a witness were there (:func:`.hook_continuity_events.door_refusals`, a lost chain).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pytest_harness_audit.audit.anchor import read_anchor
from pytest_harness_audit.audit.continuity_files import (
    WITNESS_ENV,
    WitnessUnreadable,
    read_witness,
    witness_dir,
    witness_path,
)
from pytest_harness_audit.audit.errors import ChainError
from pytest_harness_audit.audit.storage import StorageLayout
from pytest_harness_audit.doors.hook_unfinished import message_blocks, transcript_lines
from pytest_harness_audit.errors import HarnessAuditError
from pytest_harness_audit.gate import Gate
from pytest_harness_audit.gate.seam import Outcome
from pytest_harness_audit.gate.store_guard import TAMPER_ALERT, StoreGuard
from pytest_harness_audit.policy import Policy

#: The alert of a lost chain's record (beside ``tamper_attempt``).
LOST_ALERT = "chain_lost"
#: The tool name of the record of a lost chain.
LOST_TOOL = "ChainLost"
#: The tool name of the note of a session first seen in its middle.
MID_SESSION_TOOL = "MidSessionStart"
#: The alert of a session first seen at the end of a call.
LATE_ALERT = "first_seen_after_call"
#: The ``how`` of a lost chain whose witness was removed while the chain was there.
WITNESS_LOST = "witnessLost"
#: The ``how`` of a lost chain whose witness is there and cannot be read (written over).
WITNESS_UNREADABLE = "witnessUnreadable"
#: The ``witness`` of a lost chain whose witness cannot be read.
UNREADABLE = "unreadable"
#: The ``how`` of a lost chain that no longer holds refusals the host's transcript shows.
ROLLED_BACK = "rolledBack"
#: The ``how`` of a store erased with its witness after calls the door marked in the transcript.
ERASED = "erased"
#: The ``witness`` of a continuity note when no witness can be written (its folder cannot be
#: made or written).
UNWRITABLE = "unwritable"
#: The tool name of the note of a witness that cannot be read.
UNKNOWN_TOOL = "ContinuityUnknown"
#: Its alert.
UNREADABLE_ALERT = "witness_unreadable"
WARN_ALERTS = {MID_SESSION_TOOL: LATE_ALERT, UNKNOWN_TOOL: UNREADABLE_ALERT}
SESSION_START = "SessionStart"
#: The losses found by comparing the chain with what its witness (or transcript) says.
_COMPARED = frozenset({"missing", "shortened", "replaced", ROLLED_BACK, ERASED})
_FIRST_LINE_MAX = 1 << 20
_TRANSCRIPT_MAX = 64 << 20


class WitnessGuard(StoreGuard):
    """The store rule for the hook door: the store, and the folder of continuity witnesses."""

    def __init__(
        self, store: str | os.PathLike[str], root: str | None, witnesses: str | os.PathLike[str]
    ) -> None:
        super().__init__(store, root)
        self.witnesses = StoreGuard(witnesses, root)

    def offending(self, targets: Iterable[str], params: Mapping[str, Any]) -> str | None:
        """The first target (or parameter text) that touches the store or the witnesses."""
        targets = list(targets)
        return super().offending(targets, params) or self.witnesses.offending(targets, params)


@dataclass(frozen=True)
class ChainState:
    """What the store holds of a session now: its record count, first line's hash and, from its
    anchor, its head (the last line's hash) and byte length."""

    count: int
    first: str | None
    head: str | None = None
    size: int | None = None

    @classmethod
    def read(cls, storage: Path, session_id: str) -> ChainState:
        """The chain's state (count 0, no first line: there is no chain)."""
        paths = StorageLayout.at(storage).paths(session_id)
        try:
            with open(paths.chain, "rb") as handle:
                line = handle.readline(_FIRST_LINE_MAX).rstrip(b"\n")
        except OSError:
            line = b""
        first = hashlib.sha256(line).hexdigest() if line else None
        if first is None:
            return cls(0, None)
        try:
            anchor = read_anchor(paths.anchor)
        except (OSError, ValueError, HarnessAuditError):
            anchor = None
        if anchor is None:
            return cls(_count_lines(paths.chain), first)
        return cls(anchor.count, first, anchor.head, anchor.size)


def line_hash_ending_at(path: Path, size: int) -> str | None:
    """The hash of the chain's line that ends at byte ``size`` (``None``: there is none)."""
    start = max(0, size - _FIRST_LINE_MAX)
    try:
        with open(path, "rb") as handle:
            handle.seek(start)
            body = handle.read(size - start)
    except (OSError, ValueError):
        return None
    if len(body) != size - start or not body.endswith(b"\n"):
        return None  # the chain is shorter, or no line ends there
    cut = body.rfind(b"\n", 0, len(body) - 1)
    return hashlib.sha256(body[cut + 1 : -1]).hexdigest() if cut >= 0 or start == 0 else None


def _count_lines(path: Path) -> int:
    """The chain's lines, when its anchor cannot say (a chain that verify will flag)."""
    count = 0
    with contextlib.suppress(OSError), open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            count += block.count(b"\n")
    return count


@dataclass(frozen=True)
class HookEvent:
    """The fields of any hook payload continuity needs (``None`` when absent)."""

    session_id: str
    event: str
    transcript: str | None
    tool_use_id: str | None
    cwd: str | None
    #: How a ``SessionStart`` came (``startup``, ``resume``, ``compact``, ``clear``).
    source: str | None = None

    @classmethod
    def parse(cls, text: str) -> HookEvent | None:
        """The event of a payload, or ``None`` when it names no session (the handler says so)."""
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):
            return None
        if not isinstance(data, dict):
            return None
        session_id = data.get("session_id")
        if not isinstance(session_id, str) or not session_id:
            return None

        def text_of(key: str) -> str | None:
            value = data.get(key)
            return value if isinstance(value, str) and value else None

        return cls(
            session_id,
            text_of("hook_event_name") or "",
            text_of("transcript_path"),
            text_of("tool_use_id"),
            text_of("cwd"),
            text_of("source"),
        )


def transcript_size(path: str | None) -> int | None:
    """The transcript's length in bytes now (``None``: no transcript to read)."""
    if path is None:
        return None
    try:
        return os.stat(path).st_size
    except OSError:
        return None


def transcript_tool_uses(path: str | None, offset: int = 0) -> list[str]:
    """The ids of the tool calls the host's transcript holds from byte ``offset`` on.

    A Claude Code transcript is JSON lines; a tool call is a ``tool_use`` block of an
    ``assistant`` line's ``message.content``. Lines that are not JSON are skipped.
    """
    if path is None:
        return []
    ids: list[str] = []
    for raw in transcript_lines(path, offset, _TRANSCRIPT_MAX):
        if b'"tool_use"' not in raw:
            continue
        for block in message_blocks(raw, kind="assistant"):
            ident = block.get("id") if block.get("type") == "tool_use" else None
            if isinstance(ident, str) and ident not in ids:
                ids.append(ident)
    return ids


@dataclass(frozen=True)
class Loss:
    """A chain the witness vouches for and the store no longer holds."""

    #: missing | shortened | replaced | rolledBack (refused calls gone) | witnessLost |
    #: witnessUnreadable
    how: str
    records: int  # records the witness saw that are gone (at least); witness…: the chain's
    calls: tuple[str, ...]  # tool calls of the transcript made since the door opened
    problem: str = ""  # witnessUnreadable: why it cannot be read

    @property
    def reason(self) -> str:
        """The verdict reason."""
        if self.how in (WITNESS_LOST, WITNESS_UNREADABLE):
            what = (
                "removed"
                if self.how == WITNESS_LOST
                else f"written over or made unreadable ({self.problem})"
            )
            return (
                f"the session's continuity witness was {what} while its chain held "
                f"{self.records} records: a chain cut or replaced with it is unseen"
            )
        what = {
            "missing": "lost",
            "shortened": "cut short",
            "replaced": "replaced by another chain",
            ROLLED_BACK: "rolled back or begun anew: refused calls of the host's transcript "
            "are gone from it",
            ERASED: "erased with its continuity witness: calls of the host's transcript that "
            "this door answered are gone from it",
        }[self.how]
        text = f"the session's chain was {what}: {self.records} earlier records missing"
        if self.calls:
            text += f" ({len(self.calls)} earlier tool calls in the host's transcript)"
        return text


def find_loss(
    storage: Path, event: HookEvent, environ: Mapping[str, str] | None = None
) -> Loss | None:
    """The loss the witness proves before this event, if any (nothing is written)."""
    try:
        witness = read_witness(witness_path(storage, event.session_id, environ))
    except WitnessUnreadable:
        return None  # before_event records that
    if witness is None:
        return None
    seen = witness.get("count")
    first = witness.get("first")
    if not isinstance(seen, int) or seen <= 0 or not isinstance(first, str):
        return None  # the witness never saw a chain: nothing to lose
    now = ChainState.read(storage, event.session_id)
    if now.first is None:
        how, missing = "missing", seen
    elif now.first != first:
        how, missing = "replaced", seen
    elif now.count < seen:
        how, missing = "shortened", seen - now.count
    elif not _holds(storage, event.session_id, witness):
        how, missing = "replaced", seen  # the witnessed records were rewritten (then extended)
    else:
        return None
    offset = witness.get("transcriptOffset")
    calls = transcript_tool_uses(event.transcript, offset if isinstance(offset, int) else 0)
    return Loss(how, missing, tuple(c for c in calls if c != event.tool_use_id))


def _holds(storage: Path, session_id: str, witness: Mapping[str, Any]) -> bool:
    """Whether the chain still ends its first ``count`` records where the witness saw them end
    (the line ending at byte ``size`` hashes to ``head``); a witness without them passes."""
    size, head = witness.get("size"), witness.get("head")
    if not isinstance(size, int) or not isinstance(head, str):
        return True
    chain = StorageLayout.at(storage).paths(session_id).chain
    return line_hash_ending_at(chain, size) == head


def record_loss(
    storage: Path, policy: Policy, event: HookEvent, loss: Loss, *, unwritable: bool = False
) -> bool:
    """Record ``loss`` in the session's (new) chain: a FAIL part, tamper evidence
    (``unwritable``: no witness can be written again, said in the record so that it is said
    once). False when the chain can no longer be written (see :func:`note_continuity`)."""
    details: dict[str, Any] = {
        "how": loss.how,
        ("recordsMissing" if loss.how in _COMPARED else "chainRecords"): loss.records,
        "callsMissing": len(loss.calls),
        "event": event.event,
    }
    if unwritable:
        details["witness"] = UNWRITABLE
    if loss.how == WITNESS_UNREADABLE:
        details.update(witness=UNREADABLE, problem=loss.problem)
    if loss.calls:
        details["toolUseIds"] = list(loss.calls[:50])
    return note_continuity(
        storage, policy, event, LOST_TOOL, "note", details, ("FAIL", loss.reason)
    )


def note_continuity(
    storage: Path,
    policy: Policy,
    event: HookEvent,
    tool: str,
    kind: str,
    details: Mapping[str, Any],
    judged: tuple[str, str] | None,
) -> bool:
    """Record a continuity note; ``judged``: its verdict part (``FAIL`` is tamper evidence).

    A chain that can no longer be written takes no note (False): the event's own handling
    meets the same failure and says so (a ``pre`` refuses its call, ``session-end`` judges it
    FAIL), and the witness is left as it was, still holding what the note would have said."""
    try:
        gate = Gate.open(
            storage_dir=storage,
            session_id=event.session_id,
            policy=policy,
            root=event.cwd,
            door="hook",
        )
    except ChainError:
        return False
    try:
        decision = gate.unjudged(tool, "hook", details, target=None, kind=kind)
        extra: dict[str, Any] = {"continuity": dict(details)}
        outcome = Outcome("success", None, None)
        if judged is not None:
            verdict, reason = judged
            alerts = (LOST_ALERT, TAMPER_ALERT) if verdict == "FAIL" else (WARN_ALERTS[tool],)
            decision = replace(decision, alerts=alerts)
            extra["judged"] = {"verdict": verdict, "caughtBy": "continuity", "reason": reason}
            if verdict == "FAIL":
                outcome = Outcome("error", None, reason)
        try:
            gate.run(tool, details, lambda _decision: outcome, extra=extra, decision=decision)
        except ChainError:  # changed since it was opened: as above
            return False
    finally:
        gate.chain.close()
    return True


def witnessed_loss(storage: str | os.PathLike[str], session_id: str) -> str | None:
    """A loss the session's witness proves now, when the chain is read after its last hook
    event (no event is coming to record it), as ``record N (continuity witness): reason``."""
    loss = find_loss(Path(storage), HookEvent(session_id, "", None, None, None))
    if loss is None:
        return None
    now = ChainState.read(Path(storage), session_id).count
    return f"record {now} (continuity witness): {loss.reason} since the last hook event"


def recorded_losses(storage: str | os.PathLike[str], session_id: str) -> list[str]:
    """The losses the session's chain records, each as ``record N (id): reason`` (what
    ``audit verify`` prints; an unreadable chain is verify's to report), then one its witness
    proves now (:func:`witnessed_loss`). Only lines naming the alert are parsed, so a long
    chain costs one read."""
    found: list[str] = []
    mark = f'"{LOST_ALERT}"'.encode()
    path = StorageLayout.at(storage).paths(session_id).chain
    with contextlib.suppress(OSError), open(path, "rb") as handle:
        for index, line in enumerate(handle):
            if mark not in line:
                continue
            try:
                record = json.loads(line)
            except (ValueError, RecursionError):
                continue
            if not isinstance(record, dict) or record.get("tool") != LOST_TOOL:
                continue
            if LOST_ALERT not in (record.get("alerts") or ()):
                continue
            judged = record.get("judged")
            reason = judged.get("reason") if isinstance(judged, dict) else None
            found.append(f"record {index} ({record.get('recordId')}): {reason or LOST_ALERT}")
    late = witnessed_loss(storage, session_id)
    return [*found, late] if late is not None else found


__all__ = [
    "ERASED",
    "LATE_ALERT",
    "LOST_ALERT",
    "LOST_TOOL",
    "MID_SESSION_TOOL",
    "ROLLED_BACK",
    "UNKNOWN_TOOL",
    "UNREADABLE",
    "UNREADABLE_ALERT",
    "UNWRITABLE",
    "WITNESS_ENV",
    "WITNESS_LOST",
    "WITNESS_UNREADABLE",
    "ChainState",
    "HookEvent",
    "Loss",
    "WitnessGuard",
    "WitnessUnreadable",
    "find_loss",
    "note_continuity",
    "record_loss",
    "recorded_losses",
    "transcript_tool_uses",
    "witness_dir",
    "witness_path",
    "witnessed_loss",
]
