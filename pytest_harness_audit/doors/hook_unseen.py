"""Calls the host's transcript shows ran that no hook step recorded, and how they are judged.

One code path for every reader: ``SessionStart`` and ``SessionEnd`` record each such call as a
fault note (:func:`~.hook_faults.record_unrecorded_calls`); ``audit report`` of a session with
no ``SessionEnd`` (its hooks killed, or the host gone) judges the same calls, read from the
transcript the session's ``SessionStart`` record names, without writing (:func:`late_unseen`):
each counts as its note would (:func:`~pytest_harness_audit.readers.verdict.judge_record`).

A call is judged by what the transcript shows of it: its input by the policy and by the rules no
policy overrides (:class:`~pytest_harness_audit.gate.built_in.BuiltInRules`: a call that reached
the store, the installation or the harness's own processes got past the hooks: tamper, FAIL),
and its result for the project's known secrets.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple

from pytest_harness_audit.audit.errors import AuditError
from pytest_harness_audit.audit.reader import iter_records
from pytest_harness_audit.audit.record_view import CallRecord
from pytest_harness_audit.doors.hook_effects import workspace_root
from pytest_harness_audit.doors.hook_unfinished import (
    USE_ID_FIELD,
    TranscriptCall,
    problem_of,
    ran_unseen,
    stale_use_ids,
    transcript_calls,
)
from pytest_harness_audit.gate.built_in import BuiltInRules
from pytest_harness_audit.gate.store_guard import TAMPER_ALERT
from pytest_harness_audit.inspect import Inspector
from pytest_harness_audit.policy import Policy
from pytest_harness_audit.readers.verdict import VerdictReason, judge_record

#: The field of a ``SessionStart`` record's ``session`` part naming the host's transcript.
TRANSCRIPT_FIELD = "transcript"
#: The event named in the problem of a call found by ``audit report``.
REPORT_EVENT = "audit report"
#: The tool of a fault note (the host's post event).
NOTE_TOOL = "PostToolUse"


class UnseenCall(NamedTuple):
    """A call that ran with no post recorded: ``pending`` when its pre left a pending file."""

    call: TranscriptCall
    pending: bool


class UnseenJudgement(NamedTuple):
    """What a fault note of an unseen call says: its problem, whether it is tamper, and its
    alerts (a known secret in the result the agent received)."""

    problem: str
    tamper: bool
    alerts: tuple[str, ...]


class HeldCalls(NamedTuple):
    """What a session's chain holds of the host's calls: the tool of its first record, the
    ``tool_use_id`` of every record (refusals too, and those a lost chain's record names), and
    those of the calls it recorded as run; the id of its first refusal by a ``pre`` step that
    holds one, and whether such a refusal without an id comes before it (or with none after):
    one a door wrote that kept no id with its refusals (an older one, or a host sending none)."""

    first_tool: Any
    every: set[str]
    recorded: set[str]
    first_refusal: str | None = None
    bare_refusal: bool = False


def held_calls(storage: Path, session_id: str) -> HeldCalls | None:
    """What the session's chain holds (``None``: no chain yet, or one that cannot be read)."""
    first: Any = None
    every: set[str] = set()
    recorded: set[str] = set()
    first_refusal: str | None = None
    bare = False
    try:
        for index, record in enumerate(iter_records(storage, session_id)):
            first = record.get("tool") if index == 0 else first
            refused = _refused(record)
            if refused and record.get("kind", "call") == "call" and "approval" not in record:
                use_id = record.get(USE_ID_FIELD)  # a refusal by pre (not at a prompt)
                first_refusal = first_refusal or (use_id if isinstance(use_id, str) else None)
                # no field at all: an older door's (an event naming no id writes it empty)
                bare = bare or (first_refusal is None and USE_ID_FIELD not in record)
            for held_id in _use_ids(record):
                if isinstance(held_id, str):
                    every.add(held_id)
                    if not refused:  # a refusal's record is no record of the call having run
                        recorded.add(held_id)
    except (AuditError, OSError, ValueError):
        return None
    return HeldCalls(first, every, recorded, first_refusal, bare)


def claimable(uses: list[TranscriptCall], held: HeldCalls) -> list[TranscriptCall]:
    """The transcript's calls (``uses``, in its order) whose refusal by ``pre``, had there been
    one, the chain would hold by its ``tool_use_id``: all of them, unless a refusal without an
    id comes before the chain's first with one (:class:`HeldCalls`); then those from that first
    one on (none when there is none): a refusal an older door recorded without the host's id
    is no refusal lost."""
    if not held.bare_refusal:
        return uses
    ids = [use.use_id for use in uses]
    if held.first_refusal is None or held.first_refusal not in ids:
        return []
    return uses[ids.index(held.first_refusal) :]


def _use_ids(record: Any) -> list[Any]:
    """The host's ``tool_use_id`` a record holds: its call's, or those a lost chain's record
    names (already recorded as lost)."""
    found = [record.get(USE_ID_FIELD)]
    continuity = record.get("continuity")
    if record.get("tool") == "ChainLost" and isinstance(continuity, dict):
        named = continuity.get("toolUseIds")
        found.extend(named if isinstance(named, list) else ())
    return found


def _refused(record: Any) -> bool:
    """Whether a record is a refusal (the call never ran)."""
    result = record.get("result") if isinstance(record, dict) else None
    return isinstance(result, dict) and result.get("status") == "blocked"


def unseen_calls(storage: Path, session_id: str, transcript: str | None) -> list[UnseenCall]:
    """Each call the transcript shows ran and no record of the session holds: its pending file
    still there, or, after the first call a hook step saw, nothing of it at all."""
    calls = transcript_calls(transcript)
    if not calls:
        return []
    return unseen_of(
        calls, held_calls(storage, session_id), set(stale_use_ids(storage, session_id))
    )


def unseen_of(
    calls: list[TranscriptCall], held: HeldCalls | None, stale: set[str]
) -> list[UnseenCall]:
    """Of the transcript's ``calls`` that ran, those no record holds as run (:func:`unseen_calls`),
    given what the chain holds and the ``tool_use_id`` of the pending files left (``stale``)."""
    # a call a record holds (its post's, or a note of it at an earlier event) is not noted again
    recorded = held.recorded if held is not None else set()
    found = [UnseenCall(call, True) for call in calls if call.use_id in stale - recorded]
    if held is not None:
        found.extend(UnseenCall(call, False) for call in ran_unseen(calls, recorded | stale))
    return found


def judge_unseen(
    unseen: UnseenCall, event: str, policy: Policy, storage: Path, cwd: str | None
) -> UnseenJudgement:
    """The fault note's problem for ``unseen`` (found at ``event``), whether it is tamper (the
    policy or a built-in rule refuses it: it got past the hooks) and its secret alerts."""
    call = unseen.call
    root = workspace_root(cwd)
    problem = problem_of(call.use_id, call.tool, event, pending=unseen.pending)
    why, denied = _judged(call, policy, storage, root)
    return UnseenJudgement(problem + why, denied, secret_alerts(call.result, root))


def refused_input(call: TranscriptCall, policy: Policy, storage: Path, root: str | None) -> bool:
    """Whether the policy or a built-in rule refuses ``call`` by its input (the gate would have
    refused it and recorded the refusal); an error judging it counts as a refusal."""
    return _judged(call, policy, storage, root)[1]


def secret_alerts(text: str | None, root: str | None) -> tuple[str, ...]:
    """The alerts of a known secret of the project in ``text`` (a result never inspected)."""
    if not text or root is None or not os.path.isdir(root):
        return ()
    with Inspector(root, live=False) as inspector:
        return tuple(inspector.scan_output(text).alerts)


def _judged(
    call: TranscriptCall, policy: Policy, storage: Path, root: str | None
) -> tuple[str, bool]:
    """The note's added words for a call that ran unjudged, and whether it is refused. Any
    error judging it counts as a refusal (fail closed)."""
    try:
        evaluation = policy.evaluate(call.tool, call.input, root=root)
        reached = BuiltInRules.for_session(storage, root, policy).reached(evaluation, call.input)
    except Exception as exc:  # the note must be written: judged closed
        return f"; its input could not be judged ({type(exc).__name__}): counted as denied", True
    if reached is not None:
        what, touched = reached
        return f"; it reaches {what} ({touched}): it got past the hooks", True
    if evaluation.decision != "deny":
        return "", False
    rule = evaluation.rule_id or "default"
    return f"; the policy denies it ({rule}: {evaluation.reason}): it got past the hooks", True


def recorded_transcript(records: Iterable[CallRecord]) -> str | None:
    """The host's transcript the session's last ``SessionStart`` record names."""
    found = None
    for record in records:
        if record.kind == "session" and record.tool == "SessionStart":
            session = record.raw.get("session")
            named = session.get(TRANSCRIPT_FIELD) if isinstance(session, dict) else None
            found = named if isinstance(named, str) and named else found
    return found


def late_unseen(
    storage: Path, session_id: str, policy: Policy, records: list[CallRecord], cwd: str | None
) -> tuple[VerdictReason, ...]:
    """For a session whose end never came: each call its transcript shows ran that no hook
    step recorded, judged as its fault note would be; nothing is written."""
    reasons: list[VerdictReason] = []
    for unseen in unseen_calls(storage, session_id, recorded_transcript(records)):
        judged = judge_unseen(unseen, REPORT_EVENT, policy, storage, cwd)
        alerts = (*judged.alerts, *((TAMPER_ALERT,) if judged.tamper else ()))
        note = {
            "kind": "note",
            "tool": NOTE_TOOL,
            "result": {"status": "error", "errorMessage": judged.problem},
            "alerts": list(alerts),
        }
        reason = judge_record(CallRecord(note))
        if reason is not None:
            reasons.append(reason)
    return tuple(reasons)


__all__ = [
    "NOTE_TOOL",
    "REPORT_EVENT",
    "TRANSCRIPT_FIELD",
    "HeldCalls",
    "UnseenCall",
    "UnseenJudgement",
    "claimable",
    "held_calls",
    "judge_unseen",
    "late_unseen",
    "recorded_transcript",
    "refused_input",
    "secret_alerts",
    "unseen_calls",
    "unseen_of",
]
