"""A hook post step that could not be recorded as a call: its fault note.

The tool has run (or the host refused it), and the payload could not be recorded as the call:
a ``note`` record of the problem (status ``error``) goes into the payload's session, found even
when the payload as a whole cannot be parsed (too deep, broken inside), and the raw text is
scanned for the project's known secrets, since the agent received it uninspected. The verdict
counts such a note (``unrecorded-outcome``: WARN, FAIL with a secret, or when the chain itself
refused the call's record: its lock held for long, or changed behind its writer, which only a
process the agent left running does). A note the chain refuses too is kept beside the session's
witness and recorded by the next event.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

from pytest_harness_audit.audit.continuity_files import keep_fault, kept_faults
from pytest_harness_audit.audit.errors import ChainError
from pytest_harness_audit.doors.chain_faults import describe, is_chain_fault
from pytest_harness_audit.doors.chain_faults import open_gate as open_session_gate
from pytest_harness_audit.doors.hook_continuity import LOST_TOOL
from pytest_harness_audit.doors.hook_effects import workspace_root
from pytest_harness_audit.doors.hook_marks import marked_calls
from pytest_harness_audit.doors.hook_unfinished import (
    USE_ID_FIELD,
    TranscriptCall,
    made_unseen,
    refused_here,
    stale_use_ids,
    transcript_calls,
    transcript_uses,
)
from pytest_harness_audit.doors.hook_unseen import (
    UnseenJudgement,
    claimable,
    held_calls,
    judge_unseen,
    refused_input,
    secret_alerts,
    unseen_of,
)
from pytest_harness_audit.gate.seam import Outcome
from pytest_harness_audit.gate.store_guard import TAMPER_ALERT
from pytest_harness_audit.policy import Policy

#: The host events a fault note may stand for (``PostToolUse`` when the payload does not say).
POST_EVENTS = ("PostToolUse", "PostToolUseFailure", "PermissionDenied")
_KEPT_TAMPER = describe("")


def record_post_fault(text: str, *, storage: Path, policy: Policy, problem: str) -> bool:
    """A post payload that could not be recorded as a call: a ``note`` record of the problem
    (status ``error``) in its session, when the payload names one. True when recorded.

    A chain that cannot take the note either (its lock still held, the chain changed behind
    its writer) keeps it beside the session's witness for the next event to record
    (:func:`record_kept_faults`) and raises ``ChainError`` saying so: a call whose post the
    agent stalled must not leave the session without a trace."""
    data = _payload_fields(text)
    session_id = data.get("session_id")
    if not isinstance(session_id, str) or not session_id:
        return False
    event = data.get("hook_event_name")
    tool = event if isinstance(event, str) and event in POST_EVENTS else POST_EVENTS[0]
    cwd = data.get("cwd")
    cwd = cwd if isinstance(cwd, str) else None
    try:
        _note(storage, policy, session_id, tool, problem, cwd, text)
    except ChainError as exc:
        fault = {"event": tool, "problem": problem, "cwd": cwd, "kept": time.time()}
        if not keep_fault(storage, session_id, fault):
            raise
        raise ChainError(f"{exc} (the fault is kept for the session's next event)") from None
    return True


def keep_unfinished(text: str, storage: Path, problem: str, *, tamper: bool = True) -> bool:
    """Keep, for the session's next event, the fault of a post step that did not finish (past
    its deadline: something the agent arranged held it, a FIFO where a file is read, say), as
    tamper: the call ran and nothing judged it; ``tamper=False`` for a step the host cancelled
    at its entry's own ``timeout`` (a slow machine can cause it too). False: the payload names
    no session."""
    data = _payload_fields(text)
    session_id = data.get("session_id")
    if not isinstance(session_id, str) or not session_id:
        return False
    event, cwd = data.get("hook_event_name"), data.get("cwd")
    tool = event if isinstance(event, str) and event in POST_EVENTS else POST_EVENTS[0]
    fault = {"event": tool, "problem": problem, "cwd": cwd, "kept": time.time(), "tamper": tamper}
    return keep_fault(storage, session_id, fault)


def record_kept_faults(storage: Path, policy: Policy, session_id: str) -> None:
    """Record the faults kept for ``session_id`` (:func:`record_post_fault` could not), each a
    fault note, and drop each once recorded. ``ChainError``: the chain still takes none (the
    event meets the same failure and says so; the faults stay kept)."""
    for path, fault in kept_faults(storage, session_id):
        event = fault.get("event")
        tool = event if isinstance(event, str) and event in POST_EVENTS else POST_EVENTS[0]
        problem = fault.get("problem")
        if not isinstance(problem, str) or not problem:
            problem = f"{_KEPT_TAMPER}a kept fault that cannot be read ({path.name})"
        cwd = fault.get("cwd")
        when = fault.get("kept")
        if isinstance(when, (int, float)):
            moment = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(when))
            problem += f" (at {tool}, {moment}; recorded at the next event)"
        tamper = fault.get("tamper") is True
        where = cwd if isinstance(cwd, str) else None
        _note(storage, policy, session_id, tool, problem, where, tamper=tamper)
        path.unlink(missing_ok=True)


def record_unrecorded_calls(
    storage: Path,
    policy: Policy,
    session_id: str,
    transcript: str | None,
    cwd: str | None,
    event: str,
) -> list[TranscriptCall]:
    """At a session's start or end, a fault note for each call that ran with no post recorded
    (its result in the host's transcript, :mod:`.hook_unseen`): its pending file still there,
    or, after the first call a post recorded, no record holding its ``tool_use_id``. And one
    for each call the transcript shows the agent made, after the first one a record holds, that
    the rules refuse and no record holds: its refusal was recorded, so the chain lost it (put
    back as an older copy, witness and all). Those are returned, for the caller to record as a
    lost chain."""
    calls, uses = transcript_calls(transcript), transcript_uses(transcript, session_id)
    if not calls and not uses:
        return []
    held = held_calls(storage, session_id)
    stale = set(stale_use_ids(storage, session_id))
    noted: set[str] = set()
    for unseen in unseen_of(calls, held, stale):
        judged = judge_unseen(unseen, event, policy, storage, cwd)
        _note(storage, policy, session_id, POST_EVENTS[0], judged.problem, cwd, call=unseen.call,
              judged=judged)  # fmt: skip
        if not unseen.pending:
            noted.add(unseen.call.use_id)
    if held is None:
        return []
    root = workspace_root(cwd)
    uses = claimable(uses, held)  # not those an older door recorded refused without their ids
    lost = [
        use
        for use in made_unseen(uses, held.every | stale)
        # one the rules allow may have been refused by the host's own rules after pre
        if use.use_id not in noted and refused_input(use, policy, storage, root)
    ]
    found = {use.use_id for use in lost} | noted
    midway = held.first_tool != "SessionStart"  # begun anew mid-session: store and witness gone
    refused = refused_here(uses, held.every | stale, anywhere=midway)
    if midway and held.first_tool != LOST_TOOL:
        # and every call whose pre the door answered (its mark in the transcript); a chain
        # begun with its loss recorded has said what came before it
        answered = set(marked_calls(transcript, session_id)) - held.every - stale
        refused += [use for use in uses if use.use_id in answered and use not in refused]
    return lost + [use for use in refused if use.use_id not in found]


def _note(
    storage: Path,
    policy: Policy,
    session_id: str,
    tool: str,
    problem: str,
    cwd: str | None,
    text: str | None = None,
    *,
    tamper: bool = False,
    call: TranscriptCall | None = None,
    judged: UnseenJudgement | None = None,
) -> None:
    """Append the fault note (``ChainError``: the chain takes no record). A problem that is a
    chain fault (:func:`~.chain_faults.is_chain_fault`) is tamper evidence: the verdict FAILs.
    ``call``: the call noted, as the host's transcript shows it, and ``judged`` what it was
    judged (:func:`~.hook_unseen.judge_unseen`): the note holds its ``tool_use_id`` (so that it
    is noted once)."""
    root = workspace_root(cwd)
    use_id = call.use_id if call is not None else None
    gate = open_session_gate(storage_dir=storage, session_id=session_id, policy=policy, door="hook")
    try:
        params = {"problem": problem}
        decision = gate.unjudged(tool, "hook", params, target=None, kind="note")
        if tamper or is_chain_fault(problem) or (judged is not None and judged.tamper):
            decision.alerts = (*decision.alerts, TAMPER_ALERT)
        if judged is not None:
            decision.alerts = (*decision.alerts, *judged.alerts)
        elif text is not None:
            # the call ran, and its response was never inspected: a known secret in the raw
            # text is still a secret the agent received
            decision.alerts = (*decision.alerts, *secret_alerts(text, root))
        extra = {USE_ID_FIELD: use_id} if use_id else None
        outcome = Outcome("error", None, problem, extra=extra)
        gate.run(tool, params, lambda _decision: outcome, decision=decision)
    finally:
        gate.chain.close()


def _payload_fields(text: str) -> dict[str, Any]:
    """The payload as an object, or, when it cannot be parsed (too deep, broken inside), the
    fields it names first."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return _leading_fields(text)
    return data if isinstance(data, dict) else {}


_LEADING_FIELD = re.compile(r'"(session_id|hook_event_name|cwd)"\s*:\s*("(?:[^"\\]|\\.){0,4096}")')


def _leading_fields(text: str) -> dict[str, Any]:
    """The payload's ``session_id``, ``hook_event_name`` and ``cwd`` where the payload as a
    whole cannot be parsed: the first occurrence of each (the host writes them before the tool's
    input and response)."""
    found: dict[str, Any] = {}
    for match in _LEADING_FIELD.finditer(text[: 1 << 16]):
        name = match.group(1)
        if name not in found:
            try:
                found[name] = json.loads(match.group(2))
            except ValueError:
                continue
    return found
